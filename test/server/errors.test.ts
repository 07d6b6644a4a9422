import http from 'node:http';
import test from 'ava';
import { createAjv, responseValidators } from '../../src/api/validate.js';
import { newLogId } from '../../src/server/middleware.js';
import { TEST_KEY, searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../helpers/gateway.js';

const validators = responseValidators(createAjv());

async function setup(t: any, extra: Record<string, unknown> = {}) {
  const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope([{ url: 'https://a.example/', name: 'A', snippet: 's' }])));
  const gateway = await startGateway({ ...upstreamConfig(upstream.url), ...extra });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  return gateway;
}

async function expectError(t: any, response: Response, status: number, message: RegExp) {
  t.is(response.status, status);
  t.regex(response.headers.get('content-type') ?? '', /application\/json/);
  const body = (await response.json()) as any;
  t.true(validators.error(body), JSON.stringify(body));
  t.is(body.code, String(status));
  t.regex(body.message, message);
  t.is(body.msg, body.message);
  t.regex(body.log_id, /^[0-9a-f]{32}$/);
  t.is(response.headers.get('x-log-id'), body.log_id);
  t.false(/at .*\.(js|ts):\d+/.test(JSON.stringify(body)), 'no stack trace');
  return body;
}

const auth = { authorization: `Bearer ${TEST_KEY}` };

test('malformed JSON, non-object bodies, wrong content type and oversized bodies', async (t) => {
  const gateway = await setup(t, { server: { maxBodyBytes: 1024 } });
  const post = (body: string, headers: Record<string, string>) => fetch(`${gateway.url}/v1/web-search`, { method: 'POST', headers: { ...auth, ...headers }, body });
  const json = { 'content-type': 'application/json' };
  await expectError(t, await post('{"query": ', json), 400, /not a valid JSON object/);
  await expectError(t, await post('"just a string"', json), 400, /not a valid JSON object/);
  await expectError(t, await post('[1,2]', json), 400, /must be a JSON object/);
  await expectError(t, await post('{"query":"q","__proto__":{"x":1}}', json), 400, /not a valid JSON object/);
  await expectError(t, await post('query=q', { 'content-type': 'application/x-www-form-urlencoded' }), 415, /Content-Type must be application\/json/);
  await expectError(t, await post('{"query":"q"}', { 'content-type': 'text/plain' }), 415, /not text\/plain/);
  await expectError(t, await post(JSON.stringify({ query: 'q'.repeat(2000) }), json), 413, /too large/);
  const ok = await post('{"query":"q"}', { 'content-type': 'application/json; charset=utf-8' });
  t.is(ok.status, 200);
});

test('unknown routes are 404 and wrong methods 405 with Allow, in the error body', async (t) => {
  const gateway = await setup(t);
  await expectError(t, await fetch(`${gateway.url}/v2/web-search`, { method: 'POST', headers: auth }), 404, /no route for POST \/v2\/web-search/);
  await expectError(t, await fetch(`${gateway.url}/`), 404, /no route/);
  const wrong = await fetch(`${gateway.url}/v1/web-search`, { headers: auth });
  await expectError(t, wrong, 405, /method GET is not allowed on \/v1\/web-search/);
  t.is(wrong.headers.get('allow'), 'POST');
  const wrongRerank = await fetch(`${gateway.url}/v1/rerank`, { method: 'PUT', headers: auth });
  await expectError(t, wrongRerank, 405, /allowed: POST/);
  await expectError(t, await fetch(`${gateway.url}/metrics`, { method: 'DELETE' }), 405, /not allowed/);
});

test('every response gets a fresh log_id that appears in its log line; logs are JSON and carry no key', async (t) => {
  const gateway = await setup(t);
  const ids = new Set<string>();
  for (let i = 0; i < 3; i++) {
    const response = await gateway.post('/v1/web-search', { query: 'same query' });
    const body = (await response.json()) as any;
    t.is(response.headers.get('x-log-id'), body.log_id);
    ids.add(body.log_id);
  }
  t.is(ids.size, 3, 'cached replays still get their own log_id');
  const failed = await gateway.post('/v1/web-search', { query: '' });
  const failedId = ((await failed.json()) as any).log_id;
  const lines = gateway.logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
  for (const id of [...ids, failedId]) {
    const line = lines.find((entry) => entry.log_id === id);
    t.truthy(line, `log line for ${id}`);
    t.is(line!.path, '/v1/web-search');
  }
  t.is(lines.find((entry) => entry.log_id === failedId)!.status, 400);
  t.false(gateway.logLines.join('\n').includes(TEST_KEY));
  t.false(gateway.logLines.join('\n').includes('upstream-secret-key'));
});

test('an unexpected failure is a 500 with no internal detail, and the server keeps serving', async (t) => {
  const gateway = await setup(t);
  // A provider bug: make the search gateway throw a plain Error.
  const search = gateway.gateway.services.search as unknown as { search: () => Promise<never> };
  const original = search.search;
  search.search = async () => {
    throw new Error('secret internal detail at /srv/app.js:12');
  };
  const body = await expectError(t, await gateway.post('/v1/web-search', { query: 'boom' }), 500, /^internal server error$/);
  t.false(JSON.stringify(body).includes('secret internal detail'));
  const logged = gateway.logLines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'unhandled error');
  t.is(logged.log_id, body.log_id, 'the stack goes to the log, tied to the log_id');
  search.search = original;
  t.is((await gateway.post('/v1/web-search', { query: 'fine' })).status, 200);
});

test('a client that hangs up mid-request does not disturb the server', async (t) => {
  const gateway = await setup(t);
  const { port } = new URL(gateway.url);
  await new Promise<void>((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, path: '/v1/web-search', method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'content-length': '100' } });
    request.on('error', () => resolve());
    request.write('{"query":');
    setTimeout(() => {
      request.destroy();
      resolve();
    }, 50);
  });
  t.is((await gateway.post('/v1/web-search', { query: 'after' })).status, 200);
});

test('health and readiness', async (t) => {
  const gateway = await setup(t);
  const health = await fetch(`${gateway.url}/healthz`);
  t.is(health.status, 200);
  t.deepEqual(await health.json(), { status: 'ok' });
  const ready = await fetch(`${gateway.url}/readyz`);
  t.is(ready.status, 200);
  const readiness = (await ready.json()) as any;
  t.like(readiness, { status: 'ready', search: ['up'], searchMode: 'fallback', content: [], rerank: ['service-reranker-v1'] });
  t.like(readiness.providers.find((p: any) => p.provider === 'up' && p.operation === 'search'), { state: 'closed', available: true, consecutiveFailures: 0 });
  gateway.gateway.services.draining = true;
  const draining = await fetch(`${gateway.url}/readyz`);
  t.is(draining.status, 503);
  gateway.gateway.services.draining = false;
});

test('web search with an empty provider chain is a 503 that says so', async (t) => {
  const gateway = await startGateway({ search: { chain: [] } });
  t.teardown(() => gateway.close());
  await expectError(t, await gateway.post('/v1/web-search', { query: 'q' }), 503, /no search provider is configured/);
});

test('log ids are 32 hex digits and never repeat, across the draws of random bytes they are cut from', (t) => {
  const ids = Array.from({ length: 10_000 }, () => newLogId());
  for (const id of ids) t.regex(id, /^[0-9a-f]{32}$/);
  t.is(new Set(ids).size, ids.length);
  // Every hex digit turns up in every position: the ids are random, not a counter.
  for (let position = 0; position < 32; position++) t.is(new Set(ids.map((id) => id[position])).size, 16, `position ${position}`);
});
