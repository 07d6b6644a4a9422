import test from 'ava';
import { TEST_KEY, searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../helpers/gateway.js';

async function setup(t: any) {
  const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope([])));
  const gateway = await startGateway({ ...upstreamConfig(upstream.url), auth: { keys: [{ name: 'test', key: TEST_KEY }, { name: 'second', key: 'sk-second-key-999' }] } });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  return { gateway, upstream };
}

const cases: Array<[string, Record<string, string>, RegExp]> = [
  ['missing header', {}, /missing Authorization header/],
  ['empty header', { authorization: '' }, /missing Authorization header/],
  ['wrong scheme', { authorization: `Basic ${TEST_KEY}` }, /must use the Bearer scheme/],
  ['token scheme', { authorization: `Token ${TEST_KEY}` }, /must use the Bearer scheme/],
  ['key without scheme', { authorization: TEST_KEY }, /must use the Bearer scheme/],
  ['scheme only', { authorization: 'Bearer' }, /malformed Authorization header/],
  ['two spaces', { authorization: `Bearer  ${TEST_KEY}` }, /malformed Authorization header/],
  ['tab separator', { authorization: `Bearer\t${TEST_KEY}` }, /must use the Bearer scheme|malformed/],
  ['space inside the key', { authorization: `Bearer ${TEST_KEY.slice(0, 5)} ${TEST_KEY.slice(5)}` }, /malformed Authorization header/],
  ['placeholder', { authorization: 'Bearer YOUR_API_KEY' }, /placeholder YOUR_API_KEY/],
  ['placeholder in brackets', { authorization: 'Bearer <YOUR_API_KEY>' }, /placeholder/],
  ['unknown key', { authorization: 'Bearer sk-not-a-real-key' }, /invalid API key/],
  ['key with a character changed', { authorization: `Bearer ${TEST_KEY.slice(0, -1)}X` }, /invalid API key/],
  ['key prefix only', { authorization: `Bearer ${TEST_KEY.slice(0, 8)}` }, /invalid API key/],
];

for (const [name, headers, message] of cases) {
  test(`401: ${name}`, async (t) => {
    const { gateway, upstream } = await setup(t);
    for (const path of ['/v1/web-search', '/v1/rerank']) {
      const body = path === '/v1/web-search' ? { query: 'q' } : { query: 'q', documents: ['a'] };
      const response = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      t.is(response.status, 401, path);
      t.is(response.headers.get('www-authenticate'), 'Bearer realm="searchgate"');
      const json = (await response.json()) as any;
      t.is(json.code, '401');
      t.regex(json.message, message);
    }
    t.is(upstream.requests.length, 0);
  });
}

test('every configured key works, and the scheme name is case-insensitive', async (t) => {
  const { gateway } = await setup(t);
  for (const authorization of [`Bearer ${TEST_KEY}`, 'Bearer sk-second-key-999', `bearer ${TEST_KEY}`, `BEARER ${TEST_KEY}`]) {
    const response = await gateway.post('/v1/web-search', { query: 'q' }, { authorization });
    t.is(response.status, 200, authorization);
  }
  const names = gateway.logLines.map((line) => JSON.parse(line).key).filter(Boolean);
  t.true(names.includes('test') && names.includes('second'), 'the log names the key, never its value');
});

test('keys from SEARCHGATE_API_KEYS are accepted alongside configured ones', async (t) => {
  const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope([])));
  const gateway = await startGateway(upstreamConfig(upstream.url), { env: { SEARCHGATE_API_KEYS: 'sk-env-one-1111, sk-env-two-2222' } });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  t.is((await gateway.post('/v1/web-search', { query: 'q' }, { authorization: 'Bearer sk-env-two-2222' })).status, 200);
  t.is((await gateway.post('/v1/web-search', { query: 'q' }, { authorization: 'Bearer sk-env-one-1111' })).status, 200);
  t.is((await gateway.post('/v1/web-search', { query: 'q' }, { authorization: 'Bearer sk-env-three' })).status, 401);
});

test('validation comes before authentication, so a bad request is a 400 whatever the key', async (t) => {
  const { gateway } = await setup(t);
  const response = await gateway.post('/v1/web-search', { query: 'q', count: 99 }, { authorization: 'Bearer nope-nope-nope' });
  t.is(response.status, 400);
});
