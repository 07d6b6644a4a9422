import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type ExpectedError } from '../../helpers/upstream-errors.js';
import { MANDELA_PAGES, startFakeWikipedia, type FakeWikipedia, type WikiPage, type WikipediaMode } from './fake.js';
import { pathOf, queryOf } from '../../helpers/vendor-fake.js';

const NOW = Date.parse('2026-03-20T12:00:00Z');

const page = (pageid: number, title: string, timestamp: string): WikiPage => ({
  pageid,
  title,
  snippet: `About <span class="searchmatch">${title}</span>`,
  timestamp,
  wordcount: 100,
  size: 1000,
  extract: `${title} is an article.`,
});

/** 80 pages; the even ones edited in the last days, the odd ones in 2020. */
const MANY: WikiPage[] = Array.from({ length: 80 }, (_, i) =>
  page(1000 + i, `Topic ${i}`, i % 2 ? '2020-05-01T00:00:00Z' : new Date(NOW - i * 3_600_000).toISOString().replace('.000', '')),
);

const CORPORA = {
  en: MANDELA_PAGES,
  de: [page(7, 'Nelson Mandela (Begriffsklärung)', '2025-01-01T00:00:00Z')],
  no: [page(8, 'Mandela-dagen', '2025-01-02T00:00:00Z')],
  fr: [page(9, 'Mandela', '2025-01-03T00:00:00Z')],
};

async function setup(t: ExecutionContext, providerOptions: (url: string) => Record<string, unknown> = (url) => ({ baseUrl: `${url}/{language}` }), corpora: Record<string, WikiPage[]> = CORPORA) {
  const fake = await startFakeWikipedia({ corpora });
  const gateway = await searchGateway(t, fake, 'wiki', { type: 'wikipedia', ...providerOptions(fake.url) }, { now: () => NOW });
  return { fake, gateway };
}

/** A search that Wikipedia answers in `mode` ('ok': as the setup makes it fail), held to the error contract. */
const failing = (t: ExecutionContext, { fake, gateway }: { fake: FakeWikipedia; gateway: RunningGateway }, mode: WikipediaMode, expected: ExpectedError) =>
  expectUpstreamError(t, { ...searchCall(gateway, 'wiki', 'q'), secrets: [], requests: fake.requests, fail: () => (fake.state.mode = mode) }, expected);

test('the request: list=search on the language wiki with srlimit, sroffset, srprop, formatversion=2 and a searchgate User-Agent', async (t) => {
  const { fake, gateway } = await setup(t);
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'Nelson Mandela', count: 4 }));
  const [request] = fake.requests;
  t.is(request!.method, 'GET');
  t.is(pathOf(request!), '/en/w/api.php');
  t.deepEqual(queryOf(request!), {
    action: 'query',
    format: 'json',
    formatversion: '2',
    list: 'search',
    srsearch: 'Nelson Mandela',
    srlimit: '4',
    sroffset: '0',
    srprop: 'snippet|timestamp|wordcount',
    srinfo: 'totalhits',
  });
  t.regex(String(request!.headers['user-agent']), /^searchgate\/\S+ \(/);
});

test('the reply: article URLs escaped as MediaWiki does, snippets without highlighting or entities, the revision time as datePublished', async (t) => {
  const { fake, gateway } = await setup(t);
  const body = (await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'Nelson Mandela', count: 4 }))) as any;
  const value = body.data.webPages.value as Array<{ name: string; url: string; snippet: string; datePublished?: string }>;
  t.deepEqual(
    value.map((r) => r.url),
    [`${fake.url}/en/wiki/Nelson_Mandela`, `${fake.url}/en/wiki/Death_of_Nelson_Mandela`, `${fake.url}/en/wiki/C%C3%B4te_d%27Ivoire`, `${fake.url}/en/wiki/AC/DC`],
  );
  t.deepEqual(
    value.map((r) => r.name),
    ['Nelson Mandela', 'Death of Nelson Mandela', "Côte d'Ivoire", 'AC/DC'],
  );
  t.is(value[0]!.snippet, 'Nelson Rolihlahla Mandela (/mænˈdɛlə/; Xhosa: [xolíɬaɬa mandɛ̂ːla]; 18 July 1918 – 5 December 2013) was a South African anti-apartheid revolutionary,');
  t.regex(value[1]!.snippet, /the country's "father"$/);
  t.is(value[2]!.snippet, 'visited by Mandela & others');
  t.is(value[3]!.snippet, '');
  t.is(value[0]!.datePublished, '2018-07-23T07:59:43.000Z');
  t.is(body.data.webPages.totalEstimatedMatches, MANDELA_PAGES.length);
});

test("the request's language picks the wiki, the language option is the default, and a root without {language} is one fixed wiki", async (t) => {
  const { fake, gateway } = await setup(t, (url) => ({ baseUrl: `${url}/{language}`, language: 'fr' }));
  const cases: Array<[string | undefined, string]> = [
    ['de-CH', 'de'],
    ['nb', 'no'],
    [undefined, 'fr'],
  ];
  for (const [language, wiki] of cases) {
    const body = (await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'Mandela', ...(language ? { language } : {}) }))) as any;
    t.is(pathOf(fake.requests.at(-1)!), `/${wiki}/w/api.php`);
    t.true(body.data.webPages.value[0].url.startsWith(`${fake.url}/${wiki}/wiki/`));
  }

  const fixed = await setup(t, (url) => ({ baseUrl: url, articlePath: '/index.php?title=$1' }), { '': MANDELA_PAGES });
  const body = (await expectSearchOk(t, await fixed.gateway.post('/v1/web-search', { query: 'Mandela', language: 'de', count: 1 }))) as any;
  t.is(pathOf(fixed.fake.requests[0]!), '/w/api.php');
  t.is(body.data.webPages.value[0].url, `${fixed.fake.url}/index.php?title=Nelson_Mandela`);
});

test('count is honoured by paging with sroffset while continue says more exist, and paging stops when it does not', async (t) => {
  const { fake, gateway } = await setup(t, undefined, { en: MANY });
  // Freshness is not native: the gateway over-fetches (pages of 50) and keeps the recently edited half.
  const body = (await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'topic', count: 30, freshness: 'oneMonth' }))) as any;
  const value = body.data.webPages.value as Array<{ name: string }>;
  t.is(value.length, 30);
  t.deepEqual(
    value.map((r) => r.name),
    Array.from({ length: 30 }, (_, i) => `Topic ${i * 2}`),
  );
  t.deepEqual(
    fake.requests.map((request) => [queryOf(request).sroffset, queryOf(request).srlimit]),
    [
      ['0', '50'],
      ['50', '50'],
    ],
  );

  const few = await setup(t, undefined, { en: MANY.slice(0, 12) });
  const short = (await expectSearchOk(t, await few.gateway.post('/v1/web-search', { query: 'topic', count: 30, freshness: 'oneMonth' }))) as any;
  t.is(short.data.webPages.value.length, 6);
  t.is(few.fake.requests.length, 1, 'no continue.sroffset: no second page');
});

test("domain filters are decided against the wiki's host without asking it", async (t) => {
  const { fake, gateway } = await setup(t);
  for (const filter of [{ includeDomains: ['en.wikipedia.org'] }, { excludeDomains: ['127.0.0.1'] }]) {
    const body = (await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'Mandela', ...filter }))) as any;
    t.deepEqual(body.data.webPages.value, []);
  }
  t.is(fake.requests.length, 0);
  const kept = (await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'Mandela', count: 2, includeDomains: ['127.0.0.1'] }))) as any;
  t.is(kept.data.webPages.value.length, 2);
  t.is(fake.requests.length, 1);
});

test('text mode fetches each article as plain text through TextExtracts, one page per request', async (t) => {
  const { fake, gateway } = await setup(t);
  const body = (await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'Nelson Mandela', count: 2, contents: { text: { max_characters: 60 } } }))) as any;
  const value = body.data.webPages.value as Array<{ url: string; text?: string; snippet?: string }>;
  t.deepEqual(
    value.map((r) => r.text),
    MANDELA_PAGES.slice(0, 2).map((p) => [...p.extract].slice(0, 60).join('')),
  );
  t.true(value.every((r) => !('snippet' in r)));
  const extractRequests = fake.requests.filter((request) => queryOf(request).prop === 'extracts');
  t.deepEqual(
    extractRequests.map((request) => queryOf(request)).sort((a, b) => a.pageids!.localeCompare(b.pageids!)),
    ['21492751', '41284488'].map((pageids) => ({ action: 'query', format: 'json', formatversion: '2', prop: 'extracts', explaintext: '1', exsectionformat: 'plain', pageids })).sort((a, b) => a.pageids.localeCompare(b.pageids)),
  );

  // Page text that cannot be had leaves the results, without text, for the content chain.
  fake.state.mode = 'extracts-failing';
  const without = (await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'Nelson Mandela', count: 2, contents: { text: true } }))) as any;
  t.deepEqual(
    without.data.webPages.value.map((r: { url: string }) => r.url),
    value.map((r) => r.url),
  );
  t.true(without.data.webPages.value.every((r: { text?: string }) => r.text === undefined));
});

test('errors in a 200 reply are classified: ratelimited is 503; maxlag and internal_api_error are 502', async (t) => {
  const cases: Array<[WikipediaMode, number, string, RegExp]> = [
    ['ratelimited', 503, 'rate_limited', /MediaWiki error ratelimited/],
    ['maxlag', 502, 'unavailable', /MediaWiki error maxlag: Waiting for/],
    ['internal-error', 502, 'unavailable', /internal_api_error_DBQueryError/],
  ];
  for (const [mode, status, kind, message] of cases) {
    await failing(t, await setup(t), mode, { status, kind, mentions: message });
  }
});

test("Wikimedia's edge 429 is a 503 with its Retry-After; HTTP 503, a non-JSON reply and a refused User-Agent are 502; a stall is 504", async (t) => {
  await failing(t, await setup(t), 'edge-429', { status: 503, kind: 'rate_limited', retryAfter: '2' });
  await failing(t, await setup(t), 'http-503', { status: 502, kind: 'unavailable' });
  await failing(t, await setup(t), 'malformed', { status: 502, kind: 'garbage' });

  const refused = await setup(t, (url) => ({ baseUrl: `${url}/{language}`, userAgent: 'python-requests/2.31' }));
  await failing(t, refused, 'ok', { status: 502, kind: 'auth', mentions: /HTTP 403: Please set a user-agent/ });

  const stalled = await setup(t, (url) => ({ baseUrl: `${url}/{language}`, timeoutMs: 300 }));
  await failing(t, stalled, 'stall', { status: 504, kind: 'timeout' });
});
