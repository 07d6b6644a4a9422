/**
 * /v1/web-search's answer serialized once per search outcome (src/api/envelopes.ts): the text is
 * JSON.stringify's of the envelope, each answer with its own log_id, on a cache hit as on a miss.
 */
import test from 'ava';
import { webSearchEnvelope, webSearchEnvelopeText } from '../../src/api/envelopes.js';
import { webSearchRequest } from '../../src/api/validate.js';
import type { SearchOutcome } from '../../src/gateway/search.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../helpers/gateway.js';

const outcome = (): SearchOutcome => ({
  provider: 'up',
  scores: null,
  totalEstimatedMatches: 1234,
  someResultsRemoved: false,
  results: [
    { name: 'Café "quoted" \u2028 ☕ 😀', url: 'https://a.example/x?y=1&z=<2>', displayUrl: 'https://a.example/x?y=1&z=<2>', snippet: 'one', datePublished: '2024-03-01T10:00:00.000Z' },
    { name: 'Second', url: 'https://b.example/', displayUrl: 'https://b.example/', snippet: 'two', text: 'page text' },
  ],
});

const expected = (logId: string, request: ReturnType<typeof webSearchRequest>, served: SearchOutcome, idBase: string) =>
  JSON.stringify(webSearchEnvelope(logId, request, served, idBase));

test('the text is JSON.stringify of the envelope, first and on every repeat, each with its own log_id', (t) => {
  const served = outcome();
  const request = webSearchRequest({ query: 'q é' });
  const base = 'http://127.0.0.1:8080/v1/';
  for (const logId of ['0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210', 'short', 'with "quotes" and é']) {
    t.deepEqual(webSearchEnvelopeText(logId, request, served, base).text, expected(logId, request, served, base), logId);
  }
});

test('another id base, query or text mode serializes again', (t) => {
  const served = outcome();
  const snippets = webSearchRequest({ query: 'q' });
  const texts = webSearchRequest({ query: 'q', text: { maxCharacters: 100 } });
  const first = webSearchEnvelopeText('a'.repeat(32), snippets, served, 'http://one/v1/').text;
  t.deepEqual(webSearchEnvelopeText('b'.repeat(32), snippets, served, 'http://two/v1/').text, expected('b'.repeat(32), snippets, served, 'http://two/v1/'));
  t.deepEqual(webSearchEnvelopeText('c'.repeat(32), texts, served, 'http://two/v1/').text, expected('c'.repeat(32), texts, served, 'http://two/v1/'));
  t.false(expected('c'.repeat(32), texts, served, 'http://two/v1/').includes('"snippet"'), 'text mode drops snippets');
  const otherQuery = webSearchRequest({ query: 'other' });
  t.deepEqual(webSearchEnvelopeText('d'.repeat(32), otherQuery, served, 'http://two/v1/').text, expected('d'.repeat(32), otherQuery, served, 'http://two/v1/'));
  t.deepEqual(webSearchEnvelopeText('e'.repeat(32), otherQuery, served, 'http://two/v1/').text, expected('e'.repeat(32), otherQuery, served, 'http://two/v1/'));
  t.is(first, expected('a'.repeat(32), snippets, served, 'http://one/v1/'));
});

test('over HTTP, a cache hit answers the bytes of the miss but for its log_id, with the same headers', async (t) => {
  const upstream = await startUpstream((_request, res) =>
    sendJson(res, 200, searchEnvelope([{ url: 'https://a.example/', name: 'A ☕', snippet: 's', datePublished: '2024-01-02' }], { totalEstimatedMatches: 7 })),
  );
  const gateway = await startGateway({ ...upstreamConfig(upstream.url), cache: { enabled: true } });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const miss = await gateway.post('/v1/web-search', { query: 'bytes' });
  const hit = await gateway.post('/v1/web-search', { query: 'bytes' });
  t.is(miss.headers.get('x-cache'), 'MISS');
  t.is(hit.headers.get('x-cache'), 'HIT');
  for (const name of ['content-type', 'content-length']) t.is(hit.headers.get(name), miss.headers.get(name), name);
  t.is(hit.headers.get('content-type'), 'application/json; charset=utf-8');
  const [missText, hitText] = [await miss.text(), await hit.text()];
  const missId = miss.headers.get('x-log-id')!;
  const hitId = hit.headers.get('x-log-id')!;
  t.not(missId, hitId);
  t.is(JSON.parse(hitText).log_id, hitId);
  t.is(hitText, missText.replace(missId, hitId));
  t.is(upstream.requests.length, 1);
});
