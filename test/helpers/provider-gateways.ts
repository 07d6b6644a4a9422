/**
 * A real gateway wired to one upstream adapter under test, for the provider tests: one provider as
 * the whole search chain, the whole content chain (behind a snippet-only search upstream) or the
 * whole chain of one rerank model. No cache and no retries, so that every request reaches the
 * upstream exactly once. The gateway, and the fake given, are closed after the test.
 */
import type { ExecutionContext } from 'ava';
import { searchEnvelope, sendJson, startGateway, startUpstream, type RunningGateway } from './gateway.js';

interface Closable {
  close(): Promise<void>;
}

/** A provider config entry without the keys a test unset (`apiKey: undefined`: no key at all). */
const definedOnly = (entry: Record<string, unknown>) => Object.fromEntries(Object.entries(entry).filter(([, value]) => value !== undefined));

async function gatewayFor(t: ExecutionContext, servers: Closable[], config: Record<string, unknown>, options: { now?: () => number } = {}) {
  // Registered before the gateway starts, so that the fakes close even when the config is refused.
  t.teardown(() => Promise.all(servers.map((server) => server.close())).then(() => undefined));
  const gateway = await startGateway({ cache: { enabled: false }, retry: { retries: 0 }, ...config }, options.now ? { now: options.now } : {});
  t.teardown(() => gateway.close());
  return gateway;
}

/** A gateway whose search chain is the provider `name` alone. */
export function searchGateway(
  t: ExecutionContext,
  fake: Closable,
  name: string,
  entry: Record<string, unknown>,
  options: { now?: () => number; contentChain?: string[] } = {},
) {
  const content = options.contentChain ? { content: { chain: options.contentChain, timeBudgetMs: 5000 } } : {};
  return gatewayFor(t, [fake], { providers: { [name]: definedOnly(entry) }, search: { chain: [name] }, ...content }, options);
}

/** One result of the snippet-only search upstream in front of a content chain. */
export interface SnippetResult {
  url: string;
  name?: string;
  snippet?: string;
}

/**
 * A gateway whose content chain is the provider `name` alone, behind a searchgate-compatible search
 * upstream (`up`) that answers every search with `results`, snippets only; the content time budget
 * is generous, for a loaded machine.
 */
export async function contentGateway(t: ExecutionContext, fake: Closable, name: string, entry: Record<string, unknown>, results: readonly (string | SnippetResult)[]) {
  const value = results.map((result, i) => ({ name: `Result ${i}`, snippet: 'only a snippet', ...(typeof result === 'string' ? { url: result } : result) }));
  const search = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope(value)));
  return gatewayFor(t, [search, fake], {
    providers: { up: { type: 'searchgate-compatible', baseUrl: search.url }, [name]: definedOnly(entry) },
    search: { chain: ['up'] },
    content: { chain: [name], timeBudgetMs: 3000 },
  });
}

/**
 * A gateway whose rerank model `model` (service-reranker-v1 unless told) is served by the provider
 * `name` (`up` unless told) alone; `config` adds to or replaces parts of the gateway config.
 * `rerank(body)` posts to /v1/rerank for that model.
 */
export async function rerankGateway(
  t: ExecutionContext,
  fake: Closable | null,
  entry: Record<string, unknown>,
  { name = 'up', model = 'service-reranker-v1', config = {} }: { name?: string; model?: string; config?: Record<string, unknown> } = {},
) {
  const gateway = await gatewayFor(t, fake ? [fake] : [], { providers: { [name]: definedOnly(entry) }, rerank: { models: { [model]: { chain: [name] } } }, ...config });
  return {
    gateway,
    provider: name,
    rerank: (body: Record<string, unknown>) => gateway.post('/v1/rerank', { model, ...body }),
  };
}

// ---- readers -----------------------------------------------------------------------------------

/** The URLs of a web-search reply's results, in order. */
export const resultUrls = (body: { data: { webPages: { value: Array<{ url: string }> } } }): string[] => body.data.webPages.value.map((result) => result.url);

export type Ranking = Array<{ index: number; score: number }>;

/** The ranking a client gets: index and score, best first. */
export async function ranking(response: Response): Promise<Ranking> {
  const body = (await response.json()) as { results?: Array<{ index: number; relevance_score: number }>; message?: string };
  if (!body.results) throw new Error(`not a rerank response (HTTP ${response.status}): ${body.message}`);
  return body.results.map((result) => ({ index: result.index, score: result.relevance_score }));
}

/** The ranking that `score` implies for `documents`: best first, ties by index. */
export const rankedBy = (score: (query: string, document: string) => number, query: string, documents: readonly string[]): Ranking =>
  documents.map((document, index) => ({ index, score: score(query, document) })).sort((a, b) => b.score - a.score || a.index - b.index);

/** `actual` ranks as `expected` does, every score within 1e-12 of the expected one. */
export function expectRankingCloseTo(t: ExecutionContext, actual: Ranking, expected: Ranking) {
  t.deepEqual(
    actual.map((result) => result.index),
    expected.map((result) => result.index),
  );
  actual.forEach((result, i) => t.true(Math.abs(result.score - expected[i]!.score) < 1e-12, `${result.score} vs ${expected[i]!.score}`));
}
