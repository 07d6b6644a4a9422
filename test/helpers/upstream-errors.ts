/**
 * The contract every upstream adapter keeps when its upstream fails, held by one function per side:
 *
 * - search and rerank (expectUpstreamError): our edge status (a refused key or an upstream 5xx or
 *   unreadable reply is 502, a rate limit or used-up quota 503, a stall 504), Retry-After exactly
 *   when the upstream gave us a wait, an error body as expectErrorResponse holds it, a message naming
 *   the provider, the failure kind both logged and counted, one call to the upstream (no retries are
 *   configured), and the key nowhere in our reply or logs;
 * - content (expectContentFailure): the search still answers, the pages go without text, one call a
 *   page is made and counted under the failure kind, none as a success, and the key is nowhere in our
 *   reply or logs.
 *
 * The vendor test files say how to make their fake fail and what each failure must become.
 */
import type { ExecutionContext } from 'ava';
import { expectErrorResponse, expectSearchOk, metricValue, type Fault } from './faults.js';
import type { RunningGateway } from './gateway.js';

/** How many calls to `provider` for `operation` the gateway counted with this outcome. */
export const upstreamCalls = (gateway: RunningGateway, provider: string, operation: 'search' | 'content' | 'rerank', outcome: string) =>
  metricValue(gateway, 'searchgate_upstream_requests_total', { provider, operation, outcome });

/** The failure kinds the gateway logged ("upstream failed") in `lines`, in order. */
const loggedKinds = (lines: readonly string[]) =>
  lines.map((line) => JSON.parse(line) as { msg: string; kind?: string }).flatMap((line) => (line.msg === 'upstream failed' ? [line.kind] : []));

/** One request through a gateway whose chain is one provider, and how to make that provider's upstream fail. */
interface FailingCall {
  gateway: RunningGateway;
  /** The provider's name in the gateway config. */
  provider: string;
  /** The keys that must appear nowhere in our reply or logs ([] for a keyless provider). */
  secrets: readonly string[];
  /** The fake's recorded requests, to count the calls that reached it. */
  requests: readonly unknown[];
  /** Makes the fake fail in the way under test; a no-op, or omitted, when the config alone makes it fail (a wrong key). */
  fail?: () => unknown;
  /** Sends the one request. */
  send(): Promise<Response>;
}

export interface ExpectedError {
  /** Our status at the edge. */
  status: number;
  /** The failure kind: what the gateway logs for the call and counts as its metric outcome. */
  kind: string;
  /** Our Retry-After; when not given, there must be none. */
  retryAfter?: string;
  /** What our error message must say, besides naming the provider. */
  mentions?: RegExp | readonly RegExp[];
}

/** A row of a vendor's failure table: what goes wrong, the provider options it needs, what it must become. */
export type FailureCase<Failure extends string, Expected = ExpectedError> = {
  failure: Failure;
  /** Provider options for this failure: a wrong key; a short timeout for a stall (only there: a loaded machine may take longer than that to answer). */
  options?: Record<string, unknown>;
} & Expected;

/** A search for `query` through `gateway`, whose search chain is `provider` alone. */
export const searchCall = (gateway: RunningGateway, provider: string, query: string) => ({
  gateway,
  provider,
  operation: 'search' as const,
  send: () => gateway.post('/v1/web-search', { query }),
});

/** A rerank for "capital" through a gateway from rerankGateway, whose fake is to answer it with `fault`. */
export const rerankCall = (
  fake: { requests: readonly unknown[]; failNext(...faults: Fault[]): void },
  { gateway, rerank, provider }: { gateway: RunningGateway; rerank(body: Record<string, unknown>): Promise<Response>; provider: string },
  fault: Fault,
  documents = ['Paris is a capital', 'Lyon'],
) => ({
  gateway,
  provider,
  operation: 'rerank' as const,
  requests: fake.requests,
  fail: () => fake.failNext(fault),
  send: () => rerank({ query: 'capital', documents }),
});

/** Holds a search or rerank call that its upstream fails to the error contract; returns our reply. */
export async function expectUpstreamError(t: ExecutionContext, call: FailingCall & { operation: 'search' | 'rerank' }, expected: ExpectedError) {
  const { gateway, provider, operation } = call;
  call.fail?.();
  const requestsBefore = call.requests.length;
  const logsBefore = gateway.logLines.length;
  const countedBefore = await upstreamCalls(gateway, provider, operation, expected.kind);
  const response = await call.send();
  const body = await expectErrorResponse(t, gateway, response, expected.status);
  t.is(response.headers.get('retry-after'), expected.retryAfter ?? null, 'Retry-After');
  t.regex(body.message, new RegExp(`\\b${provider}: `), 'the message names the provider');
  for (const mention of [expected.mentions ?? []].flat()) t.regex(body.message, mention);
  t.deepEqual(loggedKinds(gateway.logLines.slice(logsBefore)), [expected.kind], 'the logged failure kind');
  t.is((await upstreamCalls(gateway, provider, operation, expected.kind)) - countedBefore, 1, `one call counted as ${expected.kind}`);
  t.is(call.requests.length - requestsBefore, 1, 'one call reached the upstream: no retry was configured');
  expectNoSecrets(t, gateway, JSON.stringify(body), call.secrets);
  return { response, body };
}

/** Holds a web search of `pages` results whose page text `call.provider` fails to fetch to the content contract. */
export async function expectContentFailure(t: ExecutionContext, call: FailingCall, expected: { kind: string; pages: number }) {
  const { gateway, provider } = call;
  call.fail?.();
  const requestsBefore = call.requests.length;
  const body = await expectSearchOk(t, await call.send());
  t.is(body.data.webPages.value.length, expected.pages);
  for (const result of body.data.webPages.value) t.false('text' in result, result.url);
  t.is(await upstreamCalls(gateway, provider, 'content', expected.kind), expected.pages, `every page's call counted as ${expected.kind}`);
  t.is(await upstreamCalls(gateway, provider, 'content', 'success'), 0);
  t.is(call.requests.length - requestsBefore, expected.pages, 'one call a page');
  expectNoSecrets(t, gateway, JSON.stringify(body), call.secrets);
  return body;
}

function expectNoSecrets(t: ExecutionContext, gateway: RunningGateway, reply: string, secrets: readonly string[]) {
  for (const secret of secrets) {
    t.false(reply.includes(secret), 'a key in our reply');
    t.false(
      gateway.logLines.some((line) => line.includes(secret)),
      'a key in our logs',
    );
  }
}
