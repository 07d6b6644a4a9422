/**
 * The embedded default's hybrid search end to end, with the real model: pages embedded when they
 * are written (the writer `searchgate index add` uses), a gateway that embeds only the query and
 * answers with the calibrated relevance of each result, without reranking; an index built before
 * vectors still answers, by BM25, and says so once. Serial: the gateways share one loaded model,
 * whose counters the first test reads.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { openPageEmbedder } from '../../../src/local/index/embedder.js';
import { openLocalIndex } from '../../../src/local/index/index.js';
import { IndexWriter } from '../../../src/local/index/writer.js';
import { contentHash } from '../../../src/local/ingest/indexed-page.js';
import type { IndexedPage } from '../../../src/local/types.js';
import { REAL_LOCAL_RERANKER, startGateway, TEST_KEY, TEST_MODEL_DIRECTORY } from '../../helpers/gateway.js';

function page(url: string, title: string, text: string): IndexedPage {
  const domain = new URL(url).hostname;
  return { url, canonicalUrl: url, title, text, datePublished: null, domain, language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(text) };
}

const CAT = 'https://pets.example/cats';
const PAGES = [
  page(CAT, 'Living with a house cat', 'Domestic cats purr, groom themselves and sleep most of the day. A kitten needs play and a scratching post.'),
  page('https://garage.example/diesel', 'Diesel engine maintenance', 'Change the oil and the fuel filter of a diesel engine at the intervals the manufacturer gives.'),
  page('https://bakery.example/sourdough', 'Baking sourdough bread', 'A sourdough loaf rises slowly with a starter of flour and water, then bakes in a hot oven.'),
  page('https://sky.example/comets', 'Comets and their tails', 'A comet is a ball of ice and dust whose tail points away from the sun.'),
  page('https://garden.example/tomatoes', 'Growing tomatoes', 'Tomatoes need sun, regular water and a stake to climb as the fruit ripens.'),
];

async function writeIndex(t: ExecutionContext, pages: IndexedPage[], withVectors: boolean): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-hybrid-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true, maxRetries: 5 }));
  const index = await openLocalIndex(directory);
  const loaded = withVectors ? await openPageEmbedder(TEST_MODEL_DIRECTORY) : null;
  try {
    const writer = await IndexWriter.open(index, { embedder: loaded?.embedder ?? null });
    await Promise.all(pages.map((entry) => writer.add(entry)));
    const counters = await writer.close();
    t.is(counters.embedded, withVectors ? pages.length : 0);
  } finally {
    await Promise.allSettled([index.close(), loaded?.close()]);
  }
  return directory;
}

/** The embedded reranker is loaded and search.rerank names the local provider, as by default. */
async function gatewayOver(t: ExecutionContext, directory: string, local: Record<string, unknown> = {}) {
  const gateway = await startGateway({
    providers: { local: { type: 'local', directory, vectorModel: TEST_MODEL_DIRECTORY, ...local }, 'local-reranker': REAL_LOCAL_RERANKER },
    search: { chain: ['local'] },
    cache: { enabled: false },
  });
  t.teardown(() => gateway.close());
  return gateway;
}

/** Through the Tavily dialect, whose results carry the gateway's score of each. */
async function tavilySearch(gateway: Awaited<ReturnType<typeof gatewayOver>>, query: string, maxResults = 5) {
  const response = await fetch(`${gateway.url}/tavily/search`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: TEST_KEY, query, max_results: maxResults }),
  });
  const body = (await response.json()) as any;
  if (response.status !== 200) throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(body)}`);
  return body.results as Array<{ url: string; score: number }>;
}

test.serial('a query that shares no word with a page finds it by meaning, scored by the calibrated model, without reranking', async (t) => {
  const gateway = await gatewayOver(t, await writeIndex(t, PAGES, true));
  // No page holds "feline" or "companion": full text alone cannot put the cat page first.
  const results = await tavilySearch(gateway, 'feline companion animals');
  t.is(results[0]!.url, CAT);
  for (const [i, result] of results.entries()) {
    t.true(result.score > 0 && result.score < 1, `a probability, not a rank: ${result.score}`);
    if (i > 0) t.true(results[i - 1]!.score >= result.score, 'best first');
  }
  // Rank-derived scores would be (n - i) / n: 1 for the first.
  t.not(results[0]!.score, 1);
  t.false(gateway.logLines.some((line) => line.includes('ranks by full text alone')), gateway.logLines.join('\n'));

  // The reranker, which search.rerank names for the local provider, scored no document.
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  t.regex(metrics, /^searchgate_local_reranker_documents_total\{[^}]*\} 0$/m);

  // /v1 answers the same ranking.
  const v1 = (await (await gateway.post('/v1/web-search', { query: 'feline companion animals', count: 5 })).json()) as any;
  t.deepEqual(
    v1.data.webPages.value.map((result: any) => result.url),
    results.map((result) => result.url),
  );
});

test.serial('an exact title finds its page first', async (t) => {
  const gateway = await gatewayOver(t, await writeIndex(t, PAGES, true));
  for (const entry of PAGES) t.is((await tavilySearch(gateway, entry.title, 3))[0]!.url, entry.url, entry.title);
});

test.serial('an index built before vectors answers by BM25 and says once why; vectorModel "none" does too', async (t) => {
  const legacy = await writeIndex(t, PAGES, false);
  const gateway = await gatewayOver(t, legacy);
  const first = await tavilySearch(gateway, 'diesel engine oil');
  t.is(first[0]!.url, 'https://garage.example/diesel');
  // BM25 has no probability to give: the reranker, as configured, scored the candidates.
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  t.notRegex(metrics, /^searchgate_local_reranker_documents_total\{[^}]*\} 0$/m);
  await tavilySearch(gateway, 'sourdough starter');
  const warnings = gateway.logLines.filter((line) => line.includes('ranks by full text alone'));
  t.is(warnings.length, 1, warnings.join('\n'));
  t.regex(warnings[0]!, /index add --reembed/);

  const plain = await gatewayOver(t, await writeIndex(t, PAGES, true), { vectorModel: 'none' });
  t.is((await tavilySearch(plain, 'diesel engine oil'))[0]!.url, 'https://garage.example/diesel');
  t.true(plain.logLines.some((line) => line.includes('ranks by full text alone') && line.includes('vectorModel is')));
});

test.serial('a missing vector model is said, not fatal: the index answers by BM25', async (t) => {
  const gateway = await gatewayOver(t, await writeIndex(t, PAGES, true), { vectorModel: join(tmpdir(), 'searchgate-no-such-model') });
  t.is((await tavilySearch(gateway, 'comet tail'))[0]!.url, 'https://sky.example/comets');
  t.true(gateway.logLines.some((line) => line.includes('ranks by full text alone') && line.includes('fetch-model')), gateway.logLines.join('\n'));
});

test.serial('the model embeds a page\'s title alone beside its windows, as a document of its own; a page without a title has none', async (t) => {
  const loaded = await openPageEmbedder(TEST_MODEL_DIRECTORY);
  t.teardown(() => loaded.close());
  const { embedder } = loaded;
  t.regex(embedder.model, /\+title$/);
  t.deepEqual(embedder.reads, [embedder.model, embedder.model.replace(/\+title$/, '')], 'it reads the windows of the same model stamped before titles');
  const [titled, untitled, titleAsText] = await embedder.embedPages([
    { title: 'Baking sourdough bread', text: PAGES[2]!.text },
    { title: '  ', text: PAGES[2]!.text },
    { title: '', text: 'Baking sourdough bread' },
  ]);
  t.is(untitled!.title, null);
  const title = titled!.title!;
  t.is(title.length, embedder.dimensions);
  t.true(Math.abs(title.reduce((sum, value) => sum + value * value, 0) - 1) < 1e-4, 'a unit vector');
  // The same text embedded as a page's only window: the title's vector is that document's.
  titleAsText!.windows[0]!.forEach((value, i) => t.true(Math.abs(value - title[i]!) < 1e-6));
  t.notDeepEqual(Array.from(title), Array.from(titled!.windows[0]!), 'the title alone, not the first window of title and text');
});

test.serial('over HTTP, pages embedded before title vectors keep their hybrid ranking, without a warning', async (t) => {
  // Pages as the version before title vectors wrote them: the same model's windows, under the
  // windows' own stamp, and no title vector.
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-hybrid-older-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true, maxRetries: 5 }));
  const index = await openLocalIndex(directory);
  const loaded = await openPageEmbedder(TEST_MODEL_DIRECTORY);
  try {
    const current = loaded.embedder;
    const older = {
      model: current.reads[1]!,
      dimensions: current.dimensions,
      embedPages: async (pages: ReadonlyArray<{ title: string; text: string }>) =>
        (await current.embedPages(pages)).map(({ windows }) => ({ windows, title: null })),
    };
    const writer = await IndexWriter.open(index, { embedder: older });
    await Promise.all(PAGES.map((entry) => writer.add(entry)));
    await writer.close();
    t.deepEqual((await index.stats()).vectors, { [current.reads[1]!]: PAGES.length });
  } finally {
    await Promise.allSettled([index.close(), loaded.close()]);
  }

  const gateway = await gatewayOver(t, directory);
  const results = await tavilySearch(gateway, 'feline companion animals');
  t.is(results[0]!.url, CAT);
  t.true(results[0]!.score > 0 && results[0]!.score < 1, 'the calibrated relevance, not a rank');
  t.false(gateway.logLines.some((line) => line.includes('ranks by full text alone')), gateway.logLines.join('\n'));
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  t.regex(metrics, /^searchgate_local_reranker_documents_total\{[^}]*\} 0$/m, 'nothing reranked: the hybrid scorer ranked them');
});
