import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import { searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type FailureCase } from '../../helpers/upstream-errors.js';
import { TAVILY_DOCUMENTS, TAVILY_KEY, startFakeTavily, type TavilyDocument, type TavilyFailure } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

async function setup(
  t: ExecutionContext,
  { provider = {}, corpus, now, contentChain }: { provider?: Record<string, unknown>; corpus?: TavilyDocument[]; now?: () => number; contentChain?: string[] } = {},
) {
  const tavily = await startFakeTavily({ ...(corpus ? { corpus } : {}), ...(now ? { now } : {}) });
  const options = { ...(now ? { now } : {}), ...(contentChain ? { contentChain } : {}) };
  const gateway = await searchGateway(t, tavily, 'tavily-main', { type: 'tavily', baseUrl: tavily.url, apiKey: TAVILY_KEY, ...provider }, options);
  return { tavily, gateway };
}

test('snippet mode: the documented request with a Bearer key; content becomes the snippet', async (t) => {
  const { tavily, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'Who is Leo Messi?', count: 2, language: 'es' }));

  t.is(tavily.requests.length, 1);
  const [request] = tavily.requests;
  t.is(request!.method, 'POST');
  t.is(pathOf(request!), '/search');
  t.is(request!.headers.authorization, `Bearer ${TAVILY_KEY}`);
  // Tavily documents no language parameter: nothing language-like is invented.
  t.deepEqual(request!.body, {
    query: 'Who is Leo Messi?',
    max_results: 2,
    search_depth: 'basic',
    topic: 'general',
    include_answer: false,
    include_raw_content: false,
  });

  const results = body.data.webPages.value as any[];
  t.deepEqual(
    results.map((result) => [result.url, result.name, result.snippet]),
    TAVILY_DOCUMENTS.slice(0, 2).map((document) => [document.url, document.title, document.content]),
  );
  for (const result of results) {
    t.false('text' in result);
    t.false('datePublished' in result, 'the general topic carries no dates');
  }
});

test('news topic and a date range: start_date/end_date sent, published_date normalized to ISO', async (t) => {
  const { tavily, gateway } = await setup(t, { provider: { topic: 'news' } });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'messi', count: 10, freshness: '2025-02-01..2025-02-10' }));
  const sent = tavily.requests[0]!.body;
  t.is(sent.topic, 'news');
  t.is(sent.start_date, '2025-02-01');
  t.is(sent.end_date, '2025-02-10');
  t.false('time_range' in sent);
  t.is(sent.max_results, 10, 'native filters need no over-fetch');
  t.deepEqual(
    body.data.webPages.value.map((result) => [result.url, (result as any).datePublished]),
    [
      ['https://www.britannica.com/facts/Lionel-Messi', '2025-02-10T20:51:49.000Z'],
      ['https://en.wikipedia.org/wiki/Lionel_Messi', '2025-02-04T08:00:00.000Z'],
    ],
  );
});

test('a freshness preset becomes time_range', async (t) => {
  const now = Date.parse('2025-10-25T12:00:00Z');
  const { tavily, gateway } = await setup(t, { provider: { topic: 'news' }, now: () => now });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'messi', freshness: 'oneWeek' }));
  const sent = tavily.requests[0]!.body;
  t.is(sent.time_range, 'week');
  t.false('start_date' in sent);
  t.false('end_date' in sent);
  t.deepEqual(
    body.data.webPages.value.map((result) => result.url),
    ['https://www.espn.com/soccer/story/messi-inter-miami'],
  );
});

test('domain filters are sent as include_domains/exclude_domains and honoured', async (t) => {
  const { tavily, gateway } = await setup(t);
  const body = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'messi', includeDomains: ['wikipedia.org', 'espn.com'], excludeDomains: ['espn.com'] }),
  );
  const sent = tavily.requests[0]!.body;
  t.deepEqual(sent.include_domains, ['wikipedia.org', 'espn.com']);
  t.deepEqual(sent.exclude_domains, ['espn.com']);
  t.deepEqual(
    body.data.webPages.value.map((result) => result.url),
    ['https://en.wikipedia.org/wiki/Lionel_Messi'],
  );
});

test('text mode asks for raw content in the configured format and returns it as text', async (t) => {
  const { tavily, gateway } = await setup(t);
  const body = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'messi', count: 2, contents: { text: { max_characters: 30 } } }),
  );
  t.is(tavily.requests[0]!.body.include_raw_content, 'text');
  t.deepEqual(
    body.data.webPages.value.map((result: any) => result.text),
    TAVILY_DOCUMENTS.slice(0, 2).map((document) => [...document.rawContent].slice(0, 30).join('')),
  );
  for (const result of body.data.webPages.value) t.false('snippet' in result);

  const markdown = await setup(t, { provider: { textFormat: 'markdown', searchDepth: 'advanced', country: 'argentina' } });
  await expectSearchOk(t, await markdown.gateway.post('/v1/web-search', { query: 'messi', contents: { text: true } }));
  const sent = markdown.tavily.requests[0]!.body;
  t.is(sent.include_raw_content, 'markdown');
  t.is(sent.search_depth, 'advanced');
  t.is(sent.country, 'argentina');
});

test('format "markdown": Tavily is asked for markdown raw content, whatever the configured format, and it is the text', async (t) => {
  // Tavily is the content chain too: without markdown from the search, each page would cost an Extract call.
  const { tavily, gateway } = await setup(t, { contentChain: ['tavily-main'] });
  const body = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'messi', count: 2, contents: { text: { max_characters: 30, format: 'markdown' } } }),
  );
  t.is(tavily.requests[0]!.body.include_raw_content, 'markdown');
  t.deepEqual(tavily.requests.map(pathOf), ['/search'], 'one search call, no Extract call per page');
  t.deepEqual(
    body.data.webPages.value.map((result: any) => result.text),
    TAVILY_DOCUMENTS.slice(0, 2).map((document) => [...document.rawContent].slice(0, 30).join('')),
  );
});

test('count: one call, max_results capped at Tavily’s 20 (no offset to page with)', async (t) => {
  const corpus = Array.from({ length: 25 }, (_, i) => ({ ...TAVILY_DOCUMENTS[1]!, url: `https://wiki.example.org/${i}`, title: `Page ${i}` }));
  const { tavily, gateway } = await setup(t, { corpus });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'pages', count: 30 }));
  t.deepEqual(tavily.requests.map((request) => request.body.max_results), [20]);
  t.deepEqual(
    body.data.webPages.value.map((result) => result.name),
    corpus.slice(0, 20).map((document) => document.title),
  );
});

const WRONG_KEY = 'tvly-wrong-key-0000';

const FAILURES: Array<FailureCase<TavilyFailure | 'wrong_key'>> = [
  { failure: 'wrong_key', options: { apiKey: WRONG_KEY }, status: 502, kind: 'auth', mentions: /tavily-main: HTTP 401: .*missing or invalid API key/ },
  { failure: 'rate_limited', status: 503, kind: 'rate_limited', retryAfter: '9', mentions: /tavily-main: HTTP 429/ },
  { failure: 'plan_limit', status: 503, kind: 'quota', mentions: /tavily-main: HTTP 432: .*exceeds your plan's set usage limit/ },
  { failure: 'pay_as_you_go_limit', status: 503, kind: 'quota', mentions: /tavily-main: HTTP 433: .*pay-as-you-go limit/ },
  { failure: 'server_error', status: 502, kind: 'unavailable', mentions: /tavily-main: HTTP 500/ },
  { failure: 'malformed', status: 502, kind: 'garbage', mentions: /tavily-main: reply is not JSON/ },
  { failure: 'stall', options: { timeoutMs: 150 }, status: 504, kind: 'timeout', mentions: /tavily-main/ },
];

for (const { failure, options, ...expected } of FAILURES) {
  test(`upstream failure ${failure} becomes our ${expected.status}, naming the provider but never the key`, async (t) => {
    const { tavily, gateway } = await setup(t, { provider: options });
    const fail = () => failure !== 'wrong_key' && tavily.fail(failure);
    await expectUpstreamError(t, { ...searchCall(gateway, 'tavily-main', 'messi'), secrets: [TAVILY_KEY, WRONG_KEY], requests: tavily.requests, fail }, expected);
  });
}
