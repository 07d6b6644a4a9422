/**
 * Resilience over real HTTP: a real gateway in front of real loopback upstreams that fail, stall,
 * reset, rate-limit and send garbage. Checks retries, backoff, Retry-After, the request deadline,
 * provider fallback, error mapping at our edge, secret hygiene and single-flight.
 */
import v8 from 'node:v8';
import vm from 'node:vm';
import test, { type ExecutionContext } from 'ava';
import { startGateway, upstreamConfig, type RunningGateway } from '../helpers/gateway.js';
import {
  SAMPLE_RESULTS,
  UPSTREAM_KEY,
  eventually,
  expectErrorResponse,
  expectSearchOk,
  hugeEnvelope,
  metricValue,
  partialBody,
  rawReply,
  reply,
  rerankBody,
  rerankOk,
  reset,
  scriptedChain,
  searchBody,
  searchOk,
  stall,
  startScriptedUpstream,
  timed,
  validators,
  type Fault,
} from '../helpers/faults.js';

interface Overrides {
  retry?: Record<string, unknown>;
  server?: Record<string, unknown>;
  /** Extra options of the provider (timeoutMs, …). */
  provider?: Record<string, unknown>;
  logging?: Record<string, unknown>;
  health?: Record<string, unknown>;
}

/** One scripted upstream behind one gateway, both closed when the test ends. */
async function setup(t: ExecutionContext, script: Fault[] | ((n: number) => Fault), overrides: Overrides = {}) {
  const upstream = await startScriptedUpstream(script);
  t.teardown(() => upstream.close());
  const base = upstreamConfig(upstream.url, overrides.provider ?? {});
  const gateway = await startGateway({
    ...base,
    retry: { ...base.retry, ...overrides.retry },
    ...(overrides.server ? { server: overrides.server } : {}),
    ...(overrides.logging ? { logging: overrides.logging } : {}),
    ...(overrides.health ? { health: overrides.health } : {}),
  });
  t.teardown(() => gateway.close());
  return { upstream, gateway };
}

const search = (gateway: RunningGateway, query = 'resilience') => gateway.post('/v1/web-search', searchBody(query));

const logLineFor = (gateway: RunningGateway, logId: string) =>
  gateway.logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.log_id === logId && line.msg === 'request');

// ---- retries of transient failures -------------------------------------------------------------

test('a 500 then a success is retried once and answers 200, counted in the retry metric', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(500, { message: 'boom' }), searchOk()]);
  t.is(await metricValue(gateway, 'searchgate_upstream_retries_total', { provider: 'up', operation: 'search' }), 0);

  const body = await expectSearchOk(t, await search(gateway));

  t.deepEqual(
    body.data.webPages.value.map((result) => result.url),
    SAMPLE_RESULTS.map((result) => result.url),
  );
  t.is(upstream.requests.length, 2);
  for (const request of upstream.requests) {
    t.is(request.method, 'POST');
    t.is(request.url, '/v1/web-search');
    t.is(request.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
  }
  t.deepEqual(upstream.requests[0]!.body, upstream.requests[1]!.body, 'the retry sends the same request');
  t.is(await metricValue(gateway, 'searchgate_upstream_retries_total', { provider: 'up', operation: 'search' }), 1);
  t.is(await metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'up', outcome: 'unavailable' }), 1);
  t.is(await metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'up', outcome: 'success' }), 1);
});

test('a 503 every time makes retries+1 attempts (retry.retries from config), then our 502', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(503, { message: 'overloaded' })], { retry: { retries: 3 } });

  const body = await expectErrorResponse(t, gateway, await search(gateway), 502);

  t.is(upstream.requests.length, 4);
  t.regex(body.message, /503/);
  t.is(await metricValue(gateway, 'searchgate_upstream_retries_total', { provider: 'up', operation: 'search' }), 3);
  t.true(gateway.logLines.some((line) => line.includes('"upstream failed"') && line.includes('"kind":"unavailable"')));
  // No attempt is made after the answer.
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(upstream.requests.length, 4);
});

test('with retry.retries 0 a 500 is tried exactly once', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(500, {}), searchOk()], { retry: { retries: 0 } });
  await expectErrorResponse(t, gateway, await search(gateway), 502);
  t.is(upstream.requests.length, 1);
});

test('a 400 from the upstream is not retried and maps to 502', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(400, { message: 'bad query' }), searchOk()]);
  const body = await expectErrorResponse(t, gateway, await search(gateway), 502);
  t.is(upstream.requests.length, 1);
  t.regex(body.message, /400/);
  t.is(await metricValue(gateway, 'searchgate_upstream_retries_total'), 0);
});

test.serial('backoff between attempts grows exponentially from minDelayMs', async (t) => {
  const minDelayMs = 200;
  const { upstream, gateway } = await setup(t, [reply(500, {})], { retry: { retries: 2, minDelayMs, maxDelayMs: 2000 } });

  await expectErrorResponse(t, gateway, await search(gateway), 502);

  t.is(upstream.requests.length, 3);
  const [gap1, gap2] = upstream.gaps() as [number, number];
  // Backoff with jitter: delay n is in [min·2^n, 2·min·2^n], so the second delay's floor is the first
  // delay's ceiling: a backoff that did not grow would stay under 2·min (but for its last 2.5%).
  // Lower bounds only, since timers never fire early but a loaded machine fires them late: comparing
  // the two measured gaps failed on a busy CI machine when the first was delayed by 37 ms.
  t.true(gap1 >= minDelayMs - 5, `first gap ${gap1} ms`);
  t.true(gap2 >= 2 * minDelayMs - 5, `second gap ${gap2} ms`);
});

// ---- credentials -----------------------------------------------------------------------------------

test('a rejected upstream key maps to 502 and the key never reaches the client or the logs', async (t) => {
  const { upstream, gateway } = await setup(
    t,
    [
      reply(401, { message: `invalid API key ${UPSTREAM_KEY}` }),
      reply(403, { error: { detail: `Bearer ${UPSTREAM_KEY} is not allowed`, key: UPSTREAM_KEY } }),
      rawReply(401, `unauthorized: ${UPSTREAM_KEY}`),
    ],
    { logging: { level: 'debug' } },
  );

  for (const query of ['first', 'second', 'third']) {
    const response = await search(gateway, query);
    const text = await response.clone().text();
    const body = await expectErrorResponse(t, gateway, response, 502);
    t.false(text.includes(UPSTREAM_KEY), text);
    t.regex(body.message, /40[13]/);
  }
  // Auth failures are not retried: one attempt per request.
  t.is(upstream.requests.length, 3);
  // The key was really sent, so the upstream really had it to echo.
  t.is(upstream.requests[0]!.headers.authorization, `Bearer ${UPSTREAM_KEY}`);
  t.true(gateway.logLines.length > 0);
  for (const line of gateway.logLines) t.false(line.includes(UPSTREAM_KEY), line);
});

// Bug (src/providers/http.ts, callJson → upstreamMessage/redact): the upstream message is cut to 200
// characters *before* the secrets are redacted, so a key straddling the cut is no longer a whole
// match and its prefix goes out to the client and the logs.
test('a key echoed across the 200-character cut of the upstream message does not leak in part', async (t) => {
  const echoed = `${'x'.repeat(185)} ${UPSTREAM_KEY}`;
  const { gateway } = await setup(t, [reply(401, { message: echoed })]);

  const response = await search(gateway);
  const text = await response.text();
  t.is(response.status, 502);
  const prefix = UPSTREAM_KEY.slice(0, 10);
  t.false(text.includes(prefix), `response carries "${prefix}…": ${text}`);
  for (const line of gateway.logLines) t.false(line.includes(prefix), line);
});

// Bug (src/vendors/searchgate-compatible/search.ts, its envelope check): an error carried in the
// envelope of an HTTP 200 (LangSearch does this) is turned into an UpstreamError with the upstream's
// msg verbatim, without redact(): the upstream key it echoes reaches the 502 body and the logs.
test('a key echoed in a 200 envelope error does not leak', async (t) => {
  const { gateway } = await setup(t, [reply(200, { code: 401, msg: `invalid API key ${UPSTREAM_KEY}`, data: null })]);

  const response = await search(gateway);
  const text = await response.text();
  t.is(response.status, 502);
  t.false(text.includes(UPSTREAM_KEY), text);
  for (const line of gateway.logLines) t.false(line.includes(UPSTREAM_KEY), line);
});

// ---- rate limits and Retry-After -------------------------------------------------------------------

test.serial('429 with Retry-After: 1 waits about a second, then retries and succeeds', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(429, { message: 'slow down' }, { 'retry-after': '1' }), searchOk()]);

  const body = await expectSearchOk(t, await search(gateway));

  t.is(body.data.webPages.value.length, SAMPLE_RESULTS.length);
  t.is(upstream.requests.length, 2);
  const [gap] = upstream.gaps() as [number];
  t.true(gap >= 950, `retried after ${gap} ms`);
  t.true(gap < 3000, `retried after ${gap} ms`);
});

test.serial('429 with a Retry-After above retry.maxRetryAfterMs is not waited for: 503 with Retry-After', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(429, { message: 'quota' }, { 'retry-after': '30' }), searchOk()], {
    retry: { maxRetryAfterMs: 1000 },
  });

  const { value: response, ms } = await timed(() => search(gateway));
  const body = await expectErrorResponse(t, gateway, response, 503);

  t.is(response.headers.get('retry-after'), '30');
  t.is(upstream.requests.length, 1);
  t.true(ms < 900, `answered after ${ms} ms`);
  t.regex(body.message, /rate/);
});

test('429 with an HTTP-date Retry-After is read as a date', async (t) => {
  const when = new Date(Date.now() + 60_000).toUTCString();
  const { upstream, gateway } = await setup(t, [reply(429, {}, { 'retry-after': when })], { retry: { maxRetryAfterMs: 1000 } });

  const response = await search(gateway);
  await expectErrorResponse(t, gateway, response, 503);

  const seconds = Number(response.headers.get('retry-after'));
  // Wide lower bound: on a loaded machine the reply can take seconds; the point is that the date was read.
  t.true(seconds >= 45 && seconds <= 61, `Retry-After: ${response.headers.get("retry-after")}`);
  t.is(upstream.requests.length, 1);
});

test.serial('429 with a Retry-After past the request deadline is not waited for', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(429, {}, { 'retry-after': '1' }), searchOk()], {
    server: { requestTimeoutMs: 600 },
  });

  const { value: response, ms } = await timed(() => search(gateway));
  await expectErrorResponse(t, gateway, response, 503);

  t.is(response.headers.get('retry-after'), '1');
  t.is(upstream.requests.length, 1);
  t.true(ms < 550, `answered after ${ms} ms`);
});

test('a rate-limit error in a 200 envelope is retried as a rate limit, not read as no results', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(200, { code: 429, msg: 'rate limit exceeded', data: null }), searchOk()]);

  const body = await expectSearchOk(t, await search(gateway));

  t.is(body.data.webPages.value.length, SAMPLE_RESULTS.length);
  t.is(upstream.requests.length, 2);
});

test('a rate-limit error in a 200 envelope every time ends in 503, never an empty 200', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(200, { code: '429', msg: 'rate limit exceeded', data: { webPages: { value: [] } } })]);

  const body = await expectErrorResponse(t, gateway, await search(gateway), 503);

  t.is(upstream.requests.length, 3);
  t.regex(body.message, /rate/);
});

// ---- stalls and the deadline -----------------------------------------------------------------------

test.serial('an upstream that never answers: each attempt times out, is retried, then 504 within the deadline', async (t) => {
  const requestTimeoutMs = 1500;
  const { upstream, gateway } = await setup(t, [stall()], {
    provider: { timeoutMs: 200 },
    server: { requestTimeoutMs },
  });

  const { value: response, ms } = await timed(() => search(gateway));
  const body = await expectErrorResponse(t, gateway, response, 504);

  t.is(upstream.requests.length, 3);
  for (const gap of upstream.gaps()) t.true(gap >= 180, `attempt abandoned after ${gap} ms`);
  t.true(ms >= 3 * 180, `answered after ${ms} ms`);
  t.true(ms < requestTimeoutMs + 500, `answered after ${ms} ms`);
  t.regex(body.message, /timed out/);
});

test.serial('the request deadline bounds the retries of a stalled upstream', async (t) => {
  const requestTimeoutMs = 1000;
  const { upstream, gateway } = await setup(t, [stall()], {
    provider: { timeoutMs: 150 },
    server: { requestTimeoutMs },
    retry: { retries: 10 },
    // The breaker would stop the retries after five timeouts; this test is about the deadline alone.
    health: { failureThreshold: 100 },
  });

  const { value: response, ms } = await timed(() => search(gateway));
  await expectErrorResponse(t, gateway, response, 504);

  t.true(ms >= requestTimeoutMs - 100, `gave up after ${ms} ms, before the deadline`);
  t.true(ms < requestTimeoutMs + 700, `answered after ${ms} ms`);
  t.true(upstream.requests.length >= 3 && upstream.requests.length <= 7, `${upstream.requests.length} attempts`);
});

test.serial('a per-attempt timeout longer than the deadline: 504 at the deadline after one attempt', async (t) => {
  const requestTimeoutMs = 500;
  const { upstream, gateway } = await setup(t, [stall()], {
    provider: { timeoutMs: 10_000 },
    server: { requestTimeoutMs },
  });

  const { value: response, ms } = await timed(() => search(gateway));
  await expectErrorResponse(t, gateway, response, 504);

  t.is(upstream.requests.length, 1);
  t.true(ms >= requestTimeoutMs - 50, `answered after ${ms} ms`);
  t.true(ms < requestTimeoutMs + 700, `answered after ${ms} ms`);
});

test.serial('a stalled attempt shorter than the deadline is retried and the retry succeeds', async (t) => {
  const { upstream, gateway } = await setup(t, [stall(), searchOk()], {
    provider: { timeoutMs: 200 },
    server: { requestTimeoutMs: 2000 },
  });

  const body = await expectSearchOk(t, await search(gateway));

  t.is(body.data.webPages.value.length, SAMPLE_RESULTS.length);
  t.is(upstream.requests.length, 2);
  t.true(upstream.gaps()[0]! >= 180);
});

test.serial('a reply that stalls mid-body times out and is retried', async (t) => {
  const { upstream, gateway } = await setup(t, [partialBody('stall'), searchOk()], {
    provider: { timeoutMs: 200 },
    server: { requestTimeoutMs: 2000 },
  });

  await expectSearchOk(t, await search(gateway));
  t.is(upstream.requests.length, 2);
});

/** A full garbage collection, on demand (this file runs in its own process). */
const collectGarbage = (() => {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
})();

// Bug (src/providers/http.ts, callJson, first line): the per-attempt timeout is
// `AbortSignal.any([call.signal, AbortSignal.timeout(timeoutMs)])`. Nothing holds the inner timeout
// signal strongly (the composite refers to its sources weakly; nodejs/node#57736, unfixed in Node
// 20.20), so a garbage collection during the attempt collects it and the attempt then hangs until
// the whole request's deadline: no retry, a 504 instead of the retry's 200. Under load, GC makes
// every stall test here flaky (seen with the 33 MB reply test running alongside).
test.serial('the per-attempt timeout still fires when garbage is collected during the attempt', async (t) => {
  const { upstream, gateway } = await setup(t, [stall(), searchOk()], {
    provider: { timeoutMs: 200 },
    // With the bug, the attempt hangs until this deadline and the answer is a 504; the retry's 200
    // shows the attempt's own timeout fired. No bound on the time: a loaded machine only delays it.
    server: { requestTimeoutMs: 3000 },
    retry: { retries: 1 },
  });

  const answer = search(gateway);
  await eventually(() => upstream.requests.length >= 1);
  collectGarbage();
  collectGarbage();
  const response = await answer;

  await expectSearchOk(t, response);
  t.is(upstream.requests.length, 2);
});

test.serial('the request deadline still fires when garbage is collected during the attempt', async (t) => {
  const requestTimeoutMs = 500;
  const { upstream, gateway } = await setup(t, [stall()], {
    provider: { timeoutMs: 10_000 },
    server: { requestTimeoutMs },
  });

  const answer = timed(() => search(gateway));
  await eventually(() => upstream.requests.length >= 1);
  collectGarbage();
  collectGarbage();
  const { value: response, ms } = await answer;

  await expectErrorResponse(t, gateway, response, 504);
  // With the bug, only the attempt's 10 s timeout ends the wait; the bound sits far from both so
  // that a loaded machine cannot fail it.
  t.true(ms < 5000, `answered after ${ms} ms`);
});

// ---- broken connections ----------------------------------------------------------------------------

test('a connection reset is retried and the retry succeeds', async (t) => {
  const { upstream, gateway } = await setup(t, [reset(), searchOk()]);

  const body = await expectSearchOk(t, await search(gateway));

  t.is(body.data.webPages.value.length, SAMPLE_RESULTS.length);
  t.is(upstream.requests.length, 2);
  t.is(await metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'up', outcome: 'network' }), 1);
});

test('a connection reset mid-body is retried', async (t) => {
  const { upstream, gateway } = await setup(t, [partialBody('reset'), searchOk()]);
  await expectSearchOk(t, await search(gateway));
  t.is(upstream.requests.length, 2);
});

test('a connection reset every time ends in 502 after retries+1 attempts', async (t) => {
  const { upstream, gateway } = await setup(t, [reset()]);
  const body = await expectErrorResponse(t, gateway, await search(gateway), 502);
  t.is(upstream.requests.length, 3);
  t.regex(body.message, /connection/);
});

// ---- garbage ---------------------------------------------------------------------------------------

test('a 200 whose body is not JSON is a 502 and is not retried', async (t) => {
  const { upstream, gateway } = await setup(t, [rawReply(200, '<html><body>hello</body></html>', 'text/html'), searchOk()]);
  await expectErrorResponse(t, gateway, await search(gateway), 502);
  t.is(upstream.requests.length, 1);
});

test('a 200 JSON reply without data.webPages.value is a 502, not an empty answer', async (t) => {
  const { upstream, gateway } = await setup(t, [
    reply(200, { code: 200, msg: null, data: { _type: 'SearchResponse', webPages: {} } }),
    reply(200, { code: 200, msg: null, data: { _type: 'SearchResponse', webPages: { value: 'nope' } } }),
    reply(200, []),
  ]);

  for (const query of ['one', 'two', 'three']) await expectErrorResponse(t, gateway, await search(gateway, query), 502);
  t.is(upstream.requests.length, 3);
});

test('a reply larger than the response cap is a 502, not its (empty) content', async (t) => {
  const { upstream, gateway } = await setup(t, [hugeEnvelope(33 * 1024 * 1024), searchOk()], {
    server: { requestTimeoutMs: 4000 },
  });

  const body = await expectErrorResponse(t, gateway, await search(gateway), 502);

  t.regex(body.message, /larger than/);
  t.is(upstream.requests.length, 1);
});

// ---- provider fallback -----------------------------------------------------------------------------

test('chain [failing, good]: the second provider answers 200 after the first exhausts its retries', async (t) => {
  const { upstreams, gateway } = await scriptedChain(t, { bad: [reply(500, { message: 'down' })], good: [searchOk()] });

  const response = await search(gateway);
  const body = await expectSearchOk(t, response);

  t.is(body.data.webPages.value.length, SAMPLE_RESULTS.length);
  t.is(upstreams.bad!.requests.length, 3);
  t.is(upstreams.good!.requests.length, 1);
  t.is(upstreams.good!.requests[0]!.headers.authorization, `Bearer good-${UPSTREAM_KEY}`);
  t.is(logLineFor(gateway, body.log_id)?.provider, 'good');
  t.true(gateway.logLines.some((line) => line.includes('"upstream failed"') && line.includes('"provider":"bad"')));
});

test('chain [rate-limited, good]: a Retry-After above the cap falls through at once', async (t) => {
  const { upstreams, gateway } = await scriptedChain(
    t,
    { limited: [reply(429, {}, { 'retry-after': '120' })], good: [searchOk()] },
    { retry: { maxRetryAfterMs: 1000 } },
  );

  await expectSearchOk(t, await search(gateway));
  t.is(upstreams.limited!.requests.length, 1);
  t.is(upstreams.good!.requests.length, 1);
});

test('chain [zero results, good]: the zero-result answer is the answer and the second is never called', async (t) => {
  const { upstreams, gateway } = await scriptedChain(t, { empty: [searchOk([])], good: [searchOk()] });

  const response = await search(gateway);
  const body = await expectSearchOk(t, response);

  t.deepEqual(body.data.webPages.value, []);
  t.is(upstreams.empty!.requests.length, 1);
  t.is(upstreams.good!.requests.length, 0);
});

test('chain [failing, failing]: 502 naming both failures', async (t) => {
  const { upstreams, gateway } = await scriptedChain(t, { first: [reply(500, {})], second: [reply(400, {})] });

  const body = await expectErrorResponse(t, gateway, await search(gateway), 502);

  t.is(upstreams.first!.requests.length, 3);
  t.is(upstreams.second!.requests.length, 1);
  t.regex(body.message, /first/);
  t.regex(body.message, /second/);
});

// ---- single-flight ---------------------------------------------------------------------------------

/** Requests that joined an in-flight search load so far (the search cache's hit counter, before any hit). */
async function coalescedSoFar(gateway: RunningGateway | undefined): Promise<number> {
  if (!gateway) return 0;
  const { values } = await gateway.gateway.services.metrics.cacheHits.get();
  return values.find((sample) => sample.labels.cache === 'search')?.value ?? 0;
}

/** Answers with `fault` once `count()` reaches `target` (or after 3 s, so that a failure shows, not a hang). */
const heldUntil =
  (count: () => Promise<number>, target: number, fault: Fault): Fault =>
  async (request, res, req) => {
    await eventually(async () => (await count()) >= target);
    await fault(request, res, req);
  };

test('20 concurrent identical searches share one upstream call; then a cache hit', async (t) => {
  // The upstream holds its answer until all 19 followers have joined the leader's load.
  let running: RunningGateway | undefined;
  const { upstream, gateway } = await setup(t, [heldUntil(() => coalescedSoFar(running), 19, searchOk())]);
  running = gateway;

  const responses = await Promise.all(Array.from({ length: 20 }, () => search(gateway, 'together')));
  const bodies = await Promise.all(responses.map((response) => expectSearchOk(t, response)));

  t.is(upstream.requests.length, 1);
  const statuses = responses.map((response) => response.headers.get('x-cache'));
  t.is(statuses.filter((status) => status === 'MISS').length, 1, statuses.join());
  t.is(statuses.filter((status) => status === 'COALESCED').length, 19, statuses.join());
  for (const body of bodies) t.deepEqual(body.data.webPages.value, bodies[0]!.data.webPages.value);
  t.is(bodies[0]!.data.webPages.value.length, SAMPLE_RESULTS.length);
  const logIds = new Set(bodies.map((body) => body.log_id));
  t.is(logIds.size, 20);
  responses.forEach((response, i) => t.is(response.headers.get('x-log-id'), bodies[i]!.log_id));

  const again = await search(gateway, 'together');
  const hit = await expectSearchOk(t, again);
  t.is(again.headers.get('x-cache'), 'HIT');
  t.false(logIds.has(hit.log_id));
  t.deepEqual(hit.data.webPages.value, bodies[0]!.data.webPages.value);
  t.is(upstream.requests.length, 1);
});

test('a failing load is shared by its concurrent waiters but not cached', async (t) => {
  let running: RunningGateway | undefined;
  const { upstream, gateway } = await setup(t, [heldUntil(() => coalescedSoFar(running), 4, reply(500, {})), searchOk()], {
    retry: { retries: 0 },
  });
  running = gateway;

  const responses = await Promise.all(Array.from({ length: 5 }, () => search(gateway, 'doomed')));
  const bodies = [];
  for (const response of responses) bodies.push(await expectErrorResponse(t, gateway, response, 502));

  t.is(upstream.requests.length, 1);
  t.is(new Set(bodies.map((body) => body.log_id)).size, 5);

  const retry = await search(gateway, 'doomed');
  await expectSearchOk(t, retry);
  t.is(retry.headers.get('x-cache'), 'MISS');
  t.is(upstream.requests.length, 2);
});

// ---- rerank ----------------------------------------------------------------------------------------

test('rerank: a 500 then a success is retried and answers 200', async (t) => {
  const { upstream, gateway } = await setup(t, [reply(500, {}), rerankOk()]);

  const response = await gateway.post('/v1/rerank', rerankBody());
  const text = await response.text();
  t.is(response.status, 200, text);
  const body = JSON.parse(text);
  t.true(validators.rerank(body), JSON.stringify(validators.rerank.errors));
  t.deepEqual(
    body.results.map((result: { index: number }) => result.index),
    [2, 1, 0],
  );
  t.is(upstream.requests.length, 2);
  t.true(upstream.requests.every((request) => request.url === '/v1/rerank'));
  t.is(await metricValue(gateway, 'searchgate_upstream_retries_total', { provider: 'up', operation: 'rerank' }), 1);
});

test('rerank: a 503 every time is our 502, and a 400 is not retried', async (t) => {
  const { upstream, gateway } = await setup(t, (n) => (n < 3 ? reply(503, {}) : reply(400, {})));

  await expectErrorResponse(t, gateway, await gateway.post('/v1/rerank', rerankBody(['a', 'b'])), 502);
  t.is(upstream.requests.length, 3);
  await expectErrorResponse(t, gateway, await gateway.post('/v1/rerank', rerankBody(['c', 'd'])), 502);
  t.is(upstream.requests.length, 4);
});
