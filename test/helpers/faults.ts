/**
 * Misbehaving upstreams for the resilience tests: a scripted loopback server whose n-th request gets
 * the n-th fault, with the arrival time of every request recorded, alone or several chained behind a
 * gateway, plus small readers for the gateway's error bodies and metrics.
 */
import { spawnSync } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ExecutionContext } from 'ava';
import { createAjv, responseValidators } from '../../src/api/validate.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, type RecordedRequest, type RunningGateway } from './gateway.js';

export type Fault = (request: RecordedRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

export const validators = responseValidators(createAjv());

export const SAMPLE_RESULTS = [
  { name: 'Alpha', url: 'https://alpha.example/a', snippet: 'alpha snippet' },
  { name: 'Beta', url: 'https://beta.example/b', snippet: 'beta snippet' },
];

/**
 * A loopback upstream answering its n-th request (0-based) with `script[n]`, the last entry repeating
 * forever; or with `script(n)`. `times[n]` is when request n had fully arrived (performance.now()).
 */
export async function startScriptedUpstream(script: Fault[] | ((n: number) => Fault)) {
  const times: number[] = [];
  const upstream = await startUpstream((request, res, req) => {
    const n = times.length;
    times.push(performance.now());
    const fault = typeof script === 'function' ? script(n) : script[Math.min(n, script.length - 1)]!;
    return fault(request, res, req);
  });
  return {
    ...upstream,
    times,
    /** Time between the arrival of consecutive requests, in ms. */
    gaps: () => times.slice(1).map((time, i) => time - times[i]!),
  };
}

export type ScriptedUpstream = Awaited<ReturnType<typeof startScriptedUpstream>>;

/**
 * The upstream API key the tests look for in answers and logs, to prove it never leaks; the one
 * upstreamConfig (gateway.ts) gives its provider. A scripted chain's provider `name` gets `${name}-${UPSTREAM_KEY}`.
 */
export const UPSTREAM_KEY = 'upstream-secret-key';

/** What a scripted chain's gateway config adds or overrides; any other section is passed through as is. */
export interface ScriptedChainConfig {
  /** Merged into every scripted provider's entry (timeoutMs, …). */
  provider?: Record<string, unknown>;
  /** Providers beside the scripted ones (a rerank judge, …). */
  providers?: Record<string, unknown>;
  /** Merged over { chain: the scripted providers, in key order }. */
  search?: Record<string, unknown>;
  /** Merged over two retries 5–20 ms apart: real backoff, but short enough for a test. */
  retry?: Record<string, unknown>;
  [section: string]: unknown;
}

/**
 * One scripted upstream per key of `scripts` (as startScriptedUpstream takes them), each a
 * searchgate-compatible provider of that name, chained for search in key order behind one gateway;
 * all closed when the test ends.
 */
export async function scriptedChain(
  t: ExecutionContext,
  scripts: Record<string, Parameters<typeof startScriptedUpstream>[0]>,
  { provider, providers, search, retry, ...sections }: ScriptedChainConfig = {},
  options: Parameters<typeof startGateway>[1] = {},
): Promise<{ gateway: RunningGateway; upstreams: Record<string, ScriptedUpstream> }> {
  const upstreams: Record<string, ScriptedUpstream> = {};
  const scriptedProviders: Record<string, unknown> = {};
  for (const [name, script] of Object.entries(scripts)) {
    const upstream = await startScriptedUpstream(script);
    t.teardown(() => upstream.close());
    upstreams[name] = upstream;
    scriptedProviders[name] = { type: 'searchgate-compatible', baseUrl: upstream.url, apiKey: `${name}-${UPSTREAM_KEY}`, ...provider };
  }
  const gateway = await startGateway(
    {
      ...sections,
      providers: { ...providers, ...scriptedProviders },
      search: { chain: Object.keys(scripts), ...search },
      retry: { retries: 2, minDelayMs: 5, maxDelayMs: 20, ...retry },
    },
    options,
  );
  t.teardown(() => gateway.close());
  return { gateway, upstreams };
}

// ---- faults ----------------------------------------------------------------------------------

export const reply =
  (status: number, body: unknown, headers: Record<string, string> = {}): Fault =>
  (_request, res) =>
    sendJson(res, status, body, headers);

/** A 200 with these results; `extra` joins them in webPages (totalEstimatedMatches, …). */
export const searchOk = (value: Array<Record<string, unknown>> = SAMPLE_RESULTS, extra: Record<string, unknown> = {}): Fault => reply(200, searchEnvelope(value, extra));

export const rerankOk =
  (): Fault =>
  (request, res) => {
    const documents = (request.body?.documents ?? []) as unknown[];
    // A fixed, recognisable score per position: the last document is the best.
    const results = documents.map((_, index) => ({ index, relevance_score: (index + 1) / (documents.length + 1) }));
    sendJson(res, 200, { code: 200, log_id: 'upstream-log', msg: null, model: request.body?.model, results });
  };

export const rawReply =
  (status: number, text: string, contentType = 'text/plain'): Fault =>
  (_request, res) => {
    res.writeHead(status, { 'content-type': contentType });
    res.end(text);
  };

/** Never answers; the connection stays open until the client gives up or the server closes. */
export const stall = (): Fault => () => {};

/** Drops the TCP connection without answering. */
export const reset = (): Fault => (_request, _res, req) => {
  req.socket.destroy();
};

/** Sends the status line, headers and the first bytes of a JSON body, then `then` (reset or stall). */
export const partialBody =
  (then: 'reset' | 'stall'): Fault =>
  (_request, res, req) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"code":200,"data":{"webPages":{"value":[');
    if (then === 'reset') setTimeout(() => req.socket.destroy(), 20);
  };

export const delayed =
  (ms: number, fault: Fault): Fault =>
  async (request, res, req) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (!res.destroyed) await fault(request, res, req);
  };

/**
 * A syntactically valid, empty search envelope padded to `totalBytes`: were the size cap not
 * enforced, it would read as a 200 with zero results. Streamed with backpressure, stops when the
 * client hangs up.
 */
export const hugeEnvelope =
  (totalBytes: number): Fault =>
  async (_request, res) => {
    res.on('error', () => {});
    let closed = false;
    res.on('close', () => {
      closed = true;
    });
    const head = '{"code":200,"msg":null,"data":{"webPages":{"value":[]}},"pad":"';
    const tail = '"}';
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(head);
    let sent = head.length + tail.length;
    while (sent < totalBytes && !closed) {
      const piece = totalBytes - sent >= chunk.length ? chunk : chunk.subarray(0, totalBytes - sent);
      sent += piece.length;
      if (!res.write(piece) && !closed) await drainedOrClosed(res);
    }
    if (!closed) res.end(tail);
  };

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Resolves once `condition` holds (polled every 5 ms), or after `maxMs` regardless. */
export async function eventually(condition: () => boolean | Promise<boolean>, maxMs = 3000): Promise<void> {
  const until = performance.now() + maxMs;
  while (!(await condition()) && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
}

// ---- gateway-side readers ------------------------------------------------------------------------

export const searchBody = (query = 'resilience', extra: Record<string, unknown> = {}) => ({ query, ...extra });
export const rerankBody = (documents = ['first document', 'second document', 'third document']) => ({
  model: 'service-reranker-v1',
  query: 'which is best',
  documents,
});

/** The rerank family's paths (/v1/rerank, /v2/rerank, everything under /cohere and /jina) add `detail` to the body. */
const carriesDetail = (path: string) => path === '/v1/rerank' || path === '/v2/rerank' || /^\/(cohere|jina)(\/|$)/.test(path);

/**
 * Reads an error response and holds it to the contract: the expected status, the ErrorBody schema,
 * exactly {code, log_id, message, msg} with code = status and message = msg (plus, on the rerank
 * routes, `detail` = message, which LangChain's JinaRerank reads), the same log_id as the X-Log-Id
 * header, and a gateway log line carrying that log_id. Returns the body.
 */
export async function expectErrorResponse(
  t: ExecutionContext,
  gateway: RunningGateway,
  response: Response,
  status: number,
): Promise<{ code: string; log_id: string; message: string; msg: string }> {
  const text = await response.text();
  t.is(response.status, status, `unexpected status; body: ${text}`);
  t.regex(response.headers.get('content-type') ?? '', /application\/json/);
  const body = JSON.parse(text) as { code: string; log_id: string; message: string; msg: string; detail?: string };
  t.true(validators.error(body), JSON.stringify(validators.error.errors));
  const rerankRoute = carriesDetail(new URL(response.url).pathname);
  t.deepEqual(Object.keys(body).sort(), rerankRoute ? ['code', 'detail', 'log_id', 'message', 'msg'] : ['code', 'log_id', 'message', 'msg']);
  if (rerankRoute) t.is(body.detail, body.message);
  t.is(body.code, String(status));
  t.is(typeof body.message, 'string');
  t.true(body.message.length > 0);
  t.is(body.msg, body.message);
  t.regex(body.log_id, /^[0-9a-f]{32}$/);
  t.is(response.headers.get('x-log-id'), body.log_id);
  t.true(
    gateway.logLines.some((line) => line.includes(body.log_id)),
    `no log line carries log_id ${body.log_id}`,
  );
  return body;
}

/** Reads a successful web-search response, checked against the response schema. */
export async function expectSearchOk(t: ExecutionContext, response: Response) {
  const text = await response.text();
  t.is(response.status, 200, `unexpected status; body: ${text}`);
  const body = JSON.parse(text);
  t.true(validators.webSearch(body), JSON.stringify(validators.webSearch.errors));
  return body as { code: number; log_id: string; data: { webPages: { value: Array<{ url: string; name: string }> } } };
}

/**
 * Sum of a Prometheus sample over every series of the exposition `text` whose labels include
 * `labels` (0 if there is none): a counter split by a label the test does not care about still adds up.
 */
export function metricIn(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const series: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) series[key!] = value!;
    if (Object.entries(labels).every(([key, value]) => series[key] === value)) total += Number(match[3]);
  }
  return total;
}

/** metricIn over the gateway's /metrics as it stands now. */
export async function metricValue(gateway: RunningGateway, name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricIn(await (await fetch(`${gateway.url}/metrics`)).text(), name, labels);
}

/** Milliseconds taken by `action`. */
export async function timed<T>(action: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await action();
  return { value, ms: performance.now() - started };
}

/** The exposition passes `promtool check metrics` with no error and no lint warning. */
export function assertPromtoolAccepts(t: ExecutionContext, exposition: string): void {
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
  if (promtool.error) return void t.fail('promtool must be installed (Debian package prometheus; .ci/run installs it)');
  t.is(promtool.status, 0, `${promtool.stdout}${promtool.stderr}`);
  t.is(promtool.stdout.trim() + promtool.stderr.trim(), '', 'no lint warnings');
}
