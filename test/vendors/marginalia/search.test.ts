import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type ExpectedError } from '../../helpers/upstream-errors.js';
import { startFakeMarginalia, type FakeMarginalia, type MarginaliaDoc, type MarginaliaMode } from './fake.js';
import { pathOf, queryOf } from '../../helpers/vendor-fake.js';

const KEY = 'mk-live-5b2e8f7d0c';
const REVOKED_KEY = 'mk-revoked-99aa11';
const SITES = ['a.example', 'blog.b.example', 'c.example'];

/** 30 documents spread over three sites in turn. */
const CORPUS: MarginaliaDoc[] = Array.from({ length: 30 }, (_, i) => ({
  url: `https://${SITES[i % 3]}/post-${i}`,
  title: `Post ${i}`,
  description: `About post ${i}`,
}));

async function setup(t: ExecutionContext, providerOptions: Record<string, unknown> = { apiKey: KEY }, fakeOptions: { corpus?: MarginaliaDoc[]; pageFields?: boolean } = {}) {
  const fake = await startFakeMarginalia({ corpus: fakeOptions.corpus ?? CORPUS, keys: ['public', KEY], ...(fakeOptions.pageFields === undefined ? {} : { pageFields: fakeOptions.pageFields }) });
  const gateway = await searchGateway(t, fake, 'mg', { type: 'marginalia', baseUrl: fake.url, ...providerOptions });
  return { fake, gateway };
}

/** A search that Marginalia answers in `mode` ('ok': as the setup makes it fail), held to the error contract. */
const failing = (t: ExecutionContext, { fake, gateway }: { fake: FakeMarginalia; gateway: RunningGateway }, mode: MarginaliaMode, expected: ExpectedError) =>
  expectUpstreamError(t, { ...searchCall(gateway, 'mg', 'q'), secrets: [KEY, REVOKED_KEY], requests: fake.requests, fail: () => (fake.state.mode = mode) }, expected);

test('the request: GET /search with the key in API-Key, count, a 1-based page, site: terms and the configured options', async (t) => {
  const { fake, gateway } = await setup(t, { apiKey: KEY, language: 'en-GB', resultsPerDomain: 3, nsfw: 0, filter: 'small-web' });
  const body = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'linear b', count: 7, includeDomains: ['a.example'], excludeDomains: ['c.example'], language: 'fr' }),
  );
  const [request] = fake.requests;
  t.is(request!.method, 'GET');
  t.is(pathOf(request!), '/search');
  t.is(request!.headers['api-key'], KEY);
  t.deepEqual(queryOf(request!), {
    query: 'linear b site:a.example -site:c.example',
    count: '7',
    page: '1',
    // The index is English-only upstream, so the request's "fr" is not passed; the option is.
    lang: 'en',
    dc: '3',
    filter: 'small-web',
    nsfw: '0',
  });
  t.false(request!.url.includes(KEY), 'the key is never in the URL');
  const value = body.data.webPages.value as Array<{ name: string; url: string; snippet: string }>;
  t.is(value.length, 7);
  t.true(value.every((r) => new URL(r.url).hostname === 'a.example'));
  t.deepEqual(value[0], { ...value[0], name: 'Post 0', url: 'https://a.example/post-0', snippet: 'About post 0' });
  t.false('datePublished' in value[0]!);
});

test('without an apiKey the shared key "public" is sent', async (t) => {
  const { fake, gateway } = await setup(t, {});
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'json api' }));
  t.is(fake.requests[0]!.headers['api-key'], 'public');
  t.false('lang' in queryOf(fake.requests[0]!));
});

test('several included sites are filtered by the gateway while it pages on with page=2 until count is reached', async (t) => {
  const { fake, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'post', count: 15, includeDomains: ['a.example', 'b.example'] }));
  const value = body.data.webPages.value as Array<{ url: string }>;
  t.is(value.length, 15);
  t.true(value.every((r) => /^https:\/\/(a\.example|blog\.b\.example)\//.test(r.url)));
  t.deepEqual(
    value.map((r) => r.url),
    CORPUS.filter((doc) => !doc.url.includes('c.example'))
      .slice(0, 15)
      .map((doc) => doc.url),
  );
  // No OR in Marginalia's syntax: the query goes out without site: terms.
  t.true(fake.requests.every((request) => queryOf(request).query === 'post'));
  t.deepEqual(
    fake.requests.map((request) => [queryOf(request).page, queryOf(request).count]),
    [
      ['1', '15'],
      ['2', '15'],
    ],
  );
});

test('paging stops at the last page, whether the reply says so (page/pages) or is merely short', async (t) => {
  for (const pageFields of [true, false]) {
    const { fake, gateway } = await setup(t, { apiKey: KEY }, { corpus: CORPUS.slice(0, 12), pageFields });
    // Excluding a site the results do not have is native, so no over-fetch: pages of 20.
    const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'post', count: 20, excludeDomains: ['elsewhere.example'] }));
    t.is(body.data.webPages.value.length, 12);
    t.is(fake.requests.length, 1, `one page holds everything (pageFields ${pageFields})`);
  }
});

test('freshness is not native: the results carry no date, so a freshness filter leaves none', async (t) => {
  const { fake, gateway } = await setup(t);
  const body = (await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'post', count: 5, freshness: 'oneWeek' }))) as any;
  t.deepEqual(body.data.webPages.value, []);
  t.true(body.data.webPages.someResultsRemoved);
  t.false(/year/.test(queryOf(fake.requests[0]!).query ?? ''));
});

test('an unknown key (401) is a 502 that never shows the key', async (t) => {
  await failing(t, await setup(t, { apiKey: REVOKED_KEY }), 'ok', { status: 502, kind: 'auth', mentions: /401/ });
});

test('the per-minute limit (429 QPM) and a used-up daily allowance (429 Daily Limit) are both 503', async (t) => {
  for (const [mode, kind, said] of [
    ['qpm', 'rate_limited', /QPM Limit Exceeded/],
    ['daily', 'quota', /Daily Limit Exceeded/],
  ] as const) {
    await failing(t, await setup(t), mode, { status: 503, kind, mentions: said });
  }
});

test('a failed query (500), an index timeout (504) and a malformed reply are 502; a stall is 504', async (t) => {
  const marginalia = await setup(t);
  await failing(t, marginalia, 'query-failed', { status: 502, kind: 'unavailable' });
  await failing(t, marginalia, 'index-timeout', { status: 502, kind: 'unavailable' });
  await failing(t, marginalia, 'malformed', { status: 502, kind: 'garbage', mentions: /results/ });
  await failing(t, await setup(t, { apiKey: KEY, timeoutMs: 300 }), 'stall', { status: 504, kind: 'timeout' });
});
