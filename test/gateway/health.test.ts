/**
 * Provider health: the circuit breaker (consecutive failures, error rate, half-open probes with a
 * doubling open period) and the pauses a 429 or a used-up quota imposes. Unit tests drive one
 * tracker with a hand-moved clock; the HTTP tests put a real gateway in front of real loopback
 * upstreams and read /readyz and /metrics.
 */
import test, { type ExecutionContext } from 'ava';
import { ProviderHealth, type HealthPolicy } from '../../src/gateway/health.js';
import {
  UPSTREAM_KEY,
  expectErrorResponse,
  expectSearchOk,
  metricValue,
  reply,
  scriptedChain,
  searchBody,
  searchOk,
  type Fault,
} from '../helpers/faults.js';

const POLICY: HealthPolicy = {
  failureThreshold: 3,
  errorRateThreshold: 0.5,
  minimumCalls: 4,
  windowMs: 60_000,
  openMs: 10_000,
  maxOpenMs: 25_000,
  rateLimitedPauseMs: 2_000,
  quotaPauseMs: 600_000,
};

function tracker(policy: Partial<HealthPolicy> = {}) {
  const clock = { now: 1_000_000 };
  const health = new ProviderHealth('p', 'search', { ...POLICY, ...policy }, () => clock.now);
  return { health, clock };
}

test('consecutive failures open the circuit; it lets one probe through after openMs', (t) => {
  const { health, clock } = tracker();
  health.recordFailure('unavailable', 503);
  health.recordFailure('timeout');
  t.true(health.admit().admitted, 'two failures are under the threshold');
  health.recordFailure('network');
  const refused = health.admit();
  t.false(refused.admitted);
  t.like(refused, { reason: 'circuit_open', retryAfterMs: 10_000 });

  clock.now += 10_000;
  const probe = health.admit();
  t.true(probe.admitted, 'the first call after openMs is the probe');
  t.like(health.admit(), { admitted: false, reason: 'probing' }, 'one probe at a time');
  t.is(health.snapshot().state, 'half_open');
  health.recordSuccess();
  t.is(health.snapshot().state, 'closed');
  t.true(health.admit().admitted);
});

test('a failed probe reopens the circuit for twice as long, capped at maxOpenMs', (t) => {
  const { health, clock } = tracker();
  for (let i = 0; i < 3; i++) health.recordFailure('unavailable');
  for (const expectedOpenMs of [20_000, 25_000, 25_000]) {
    clock.now += 30_000;
    t.true(health.admit().admitted);
    health.recordFailure('unavailable');
    t.like(health.admit(), { admitted: false, reason: 'circuit_open', retryAfterMs: expectedOpenMs });
  }
  t.is(health.snapshot().opened, 4);
  clock.now += 25_000;
  t.true(health.admit().admitted);
  health.recordSuccess();
  for (let i = 0; i < 3; i++) health.recordFailure('unavailable');
  t.like(health.admit(), { retryAfterMs: 10_000 }, 'a success resets the open period');
});

test('a probe that never ran is released, so the next call can probe', (t) => {
  const { health, clock } = tracker();
  for (let i = 0; i < 3; i++) health.recordFailure('garbage');
  clock.now += 10_000;
  const probe = health.admit();
  t.true(probe.admitted);
  if (probe.admitted) probe.release();
  t.true(health.admit().admitted);
});

test('the error rate over the window opens the circuit without consecutive failures', (t) => {
  const { health, clock } = tracker({ failureThreshold: 100, minimumCalls: 6 });
  for (let i = 0; i < 5; i++) {
    if (i % 2) health.recordSuccess();
    else health.recordFailure('unavailable');
  }
  t.true(health.admit().admitted, 'five calls are under minimumCalls');
  t.is(health.snapshot().errorRate, null);
  health.recordSuccess();
  t.true(health.admit().admitted, '3 of 6 failed is exactly the threshold, but the last call succeeded');
  health.recordFailure('unavailable');
  t.false(health.admit().admitted, '4 of 7 failed');

  const fresh = tracker({ failureThreshold: 100, minimumCalls: 4 });
  fresh.health.recordFailure('unavailable');
  fresh.health.recordFailure('unavailable');
  fresh.clock.now += 61_000;
  fresh.health.recordSuccess();
  fresh.health.recordFailure('unavailable');
  t.true(fresh.health.admit().admitted, 'failures older than the window are forgotten');
  t.is(fresh.health.snapshot().callsInWindow, 2);
});

test('rate limits and quotas pause the provider without counting as failures; bad requests count as answers', (t) => {
  const { health, clock } = tracker();
  health.recordFailure('rate_limited', 429, 7_000);
  t.like(health.admit(), { admitted: false, reason: 'rate_limited', retryAfterMs: 7_000 });
  clock.now += 7_000;
  t.true(health.admit().admitted);
  health.recordFailure('rate_limited', 429);
  t.like(health.admit(), { admitted: false, reason: 'rate_limited', retryAfterMs: 2_000 }, 'no Retry-After: the default pause');
  clock.now += 2_000;
  health.recordFailure('quota', 402);
  t.like(health.admit(), { admitted: false, reason: 'quota', retryAfterMs: 600_000 });
  t.is(health.snapshot().state, 'closed');
  t.is(health.snapshot().consecutiveFailures, 0);

  const other = tracker();
  for (let i = 0; i < 10; i++) other.health.recordFailure('bad_request', 400);
  t.true(other.health.admit().admitted);
  t.is(other.health.snapshot().state, 'closed');
});

// ---- over HTTP ----------------------------------------------------------------------------------

/**
 * Scripted upstreams chained behind a gateway on a hand-moved clock. No retries and no cache, so that
 * each search costs every provider it reaches exactly one call and the failure counts are exact.
 */
async function chain(t: ExecutionContext, scripts: Record<string, Fault[]>, health: Partial<HealthPolicy> = {}) {
  const clock = { now: Date.parse('2026-11-23T12:00:00Z') };
  const { gateway, upstreams } = await scriptedChain(
    t,
    scripts,
    { retry: { retries: 0 }, cache: { enabled: false }, health: { ...POLICY, ...health } },
    { now: () => clock.now },
  );
  const readiness = async () => (await (await fetch(`${gateway.url}/readyz`)).json()) as any;
  const providerReport = async (name: string) => (await readiness()).providers.find((p: any) => p.provider === name && p.operation === 'search');
  return { gateway, upstreams, clock, readiness, providerReport };
}

const ALPHA = [{ name: 'Alpha', url: 'https://alpha.example/', snippet: 'from the first provider' }];
const BETA = [{ name: 'Beta', url: 'https://beta.example/', snippet: 'from the fallback' }];

test('a failing provider is skipped once its circuit opens, and probed again later', async (t) => {
  const { gateway, upstreams, clock, providerReport } = await chain(t, {
    first: [reply(500, { message: 'boom' }), reply(500, { message: 'boom' }), reply(500, { message: 'boom' }), reply(500, {}), searchOk(ALPHA)],
    second: [searchOk(BETA)],
  });
  for (let i = 0; i < 3; i++) {
    const body = await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody(`q${i}`)));
    t.is(body.data.webPages.value[0]!.name, 'Beta');
  }
  t.is(upstreams.first!.requests.length, 3);
  t.like(await providerReport('first'), { state: 'open', available: false, unavailable: { reason: 'circuit_open', retryInSeconds: 10 } });

  await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('skipped')));
  t.is(upstreams.first!.requests.length, 3, 'an open circuit makes no call');
  t.is(upstreams.second!.requests.length, 4);
  t.is(await metricValue(gateway, 'searchgate_upstream_skipped_total', { provider: 'first', reason: 'circuit_open' }), 1);
  t.is(await metricValue(gateway, 'searchgate_provider_circuit_state', { provider: 'first', operation: 'search', state: 'open' }), 1);
  t.is(await metricValue(gateway, 'searchgate_provider_circuit_state', { provider: 'second', operation: 'search', state: 'closed' }), 1);
  t.is(await metricValue(gateway, 'searchgate_provider_unavailable_seconds', { provider: 'first' }), 10);

  clock.now += 10_000;
  await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('probe fails')));
  t.is(upstreams.first!.requests.length, 4, 'the probe');
  t.like(await providerReport('first'), { state: 'open', unavailable: { retryInSeconds: 20 } }, 'a failed probe doubles the open period');

  clock.now += 20_000;
  const recovered = await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('probe succeeds')));
  t.is(recovered.data.webPages.value[0]!.name, 'Alpha');
  t.like(await providerReport('first'), { state: 'closed', available: true, consecutiveFailures: 0 });
  t.is(await metricValue(gateway, 'searchgate_provider_circuit_transitions_total', { provider: 'first', state: 'closed' }), 1);
  t.is(await metricValue(gateway, 'searchgate_provider_circuit_transitions_total', { provider: 'first', state: 'open' }), 2);
});

test('a 429 with Retry-After pauses the provider for that long; the chain moves on meanwhile', async (t) => {
  const { gateway, upstreams, clock, providerReport } = await chain(t, {
    first: [reply(429, { message: 'slow down' }, { 'Retry-After': '30' }), searchOk(ALPHA)],
    second: [searchOk(BETA)],
  });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('one')));
  t.is(body.data.webPages.value[0]!.name, 'Beta');
  t.like(await providerReport('first'), { state: 'closed', available: false, unavailable: { reason: 'rate_limited', retryInSeconds: 30 } });

  clock.now += 29_000;
  await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('two')));
  t.is(upstreams.first!.requests.length, 1, 'still paused');

  clock.now += 1_000;
  const after = await expectSearchOk(t, await gateway.post('/v1/web-search', searchBody('three')));
  t.is(after.data.webPages.value[0]!.name, 'Alpha');
  t.is(upstreams.first!.requests.length, 2);
});

test('a rate-limited chain is a 503 with Retry-After, also while paused, never an empty answer', async (t) => {
  const { gateway, upstreams, readiness } = await chain(t, { only: [reply(429, { message: 'too many' }, { 'Retry-After': '40' })] });
  const first = await gateway.post('/v1/web-search', searchBody('one'));
  t.is(first.headers.get('retry-after'), '40');
  const firstBody = await expectErrorResponse(t, gateway, first, 503);
  t.regex(firstBody.message, /rate-limiting/);

  const second = await gateway.post('/v1/web-search', searchBody('two'));
  t.is(second.headers.get('retry-after'), '40');
  const secondBody = await expectErrorResponse(t, gateway, second, 503);
  t.regex(secondBody.message, /no search provider is available right now.*only: paused after a rate limit/);
  t.is(upstreams.only!.requests.length, 1);
  t.like(await readiness(), { status: 'degraded', degraded: ['search'] });
});

test('every circuit open is a 503 naming why, not a 502; /readyz says degraded but stays 200', async (t) => {
  const { gateway, upstreams, readiness } = await chain(t, { first: [reply(502, {})], second: [reply(503, {})] }, { failureThreshold: 1 });
  await expectErrorResponse(t, gateway, await gateway.post('/v1/web-search', searchBody('fails')), 502);
  const skipped = await gateway.post('/v1/web-search', searchBody('skipped'));
  t.is(skipped.headers.get('retry-after'), '10');
  const body = await expectErrorResponse(t, gateway, skipped, 503);
  t.regex(body.message, /first: circuit open after repeated failures; second: circuit open/);
  t.is(upstreams.first!.requests.length + upstreams.second!.requests.length, 2);
  const ready = await fetch(`${gateway.url}/readyz`);
  t.is(ready.status, 200);
  t.like(await readiness(), { status: 'degraded' });
  const report = (await readiness()).providers.find((p: any) => p.provider === 'second');
  t.like(report, { lastFailure: { kind: 'unavailable', status: 503 } });
  t.false(JSON.stringify(await readiness()).includes(UPSTREAM_KEY));
});

test('upstream 400s do not open the circuit', async (t) => {
  const { gateway, upstreams, providerReport } = await chain(t, { only: [reply(400, { message: 'bad query' })] }, { failureThreshold: 2 });
  for (let i = 0; i < 4; i++) await expectErrorResponse(t, gateway, await gateway.post('/v1/web-search', searchBody(`q${i}`)), 502);
  t.is(upstreams.only!.requests.length, 4);
  t.like(await providerReport('only'), { state: 'closed', available: true });
});
