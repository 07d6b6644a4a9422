import test, { type ExecutionContext } from 'ava';
import { expectSearchOk, metricValue } from '../../helpers/faults.js';
import { sendJson, startGateway, startUpstream } from '../../helpers/gateway.js';
import { pagedSearchType } from '../../helpers/test-providers.js';
import { TAVILY_DOCUMENTS, TAVILY_KEY, startFakeTavily, type TavilyFailure } from '../fakes/tavily.js';

/** Search results with snippets only: two pages Tavily can extract, one it cannot. */
const PAGES = [
  { url: TAVILY_DOCUMENTS[0]!.url, title: 'Britannica', snippet: 'facts' },
  { url: 'https://unknown.example/missing', title: 'Missing', snippet: 'not extractable' },
  { url: TAVILY_DOCUMENTS[2]!.url, title: 'ESPN', snippet: 'contract' },
];

async function setup(t: ExecutionContext, provider: Record<string, unknown> = {}) {
  const tavily = await startFakeTavily();
  const search = await startUpstream((_request, res) => sendJson(res, 200, { items: PAGES }));
  const gateway = await startGateway(
    {
      providers: {
        snippets: { type: 'test-paged', baseUrl: search.url, maxPageSize: 10 },
        'tavily-pages': { type: 'tavily', baseUrl: tavily.url, apiKey: TAVILY_KEY, ...provider },
      },
      search: { chain: ['snippets'] },
      content: { chain: ['tavily-pages'], timeBudgetMs: 2_000 },
      cache: { enabled: false },
    },
    { providerTypes: { 'test-paged': pagedSearchType } },
  );
  t.teardown(async () => {
    await gateway.close();
    await search.close();
    await tavily.close();
  });
  return { tavily, gateway };
}

const textSearch = { query: 'messi', count: 3, contents: { text: { max_characters: 50 } } };

test('text mode: page text from POST /extract; a failed_results page keeps its result without text', async (t) => {
  const { tavily, gateway } = await setup(t, { extractDepth: 'advanced' });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', textSearch));
  const results = body.data.webPages.value as any[];

  t.is(tavily.requests.length, 3, 'one /extract call per page');
  for (const request of tavily.requests) {
    t.is(request.method, 'POST');
    t.is(new URL(request.url, 'http://x').pathname, '/extract');
    t.is(request.headers.authorization, `Bearer ${TAVILY_KEY}`);
  }
  t.deepEqual(
    tavily.requests.map((request) => request.body.urls[0]).sort(),
    PAGES.map((page) => page.url).sort(),
  );
  for (const request of tavily.requests) {
    t.deepEqual(request.body, { urls: [request.body.urls[0]], extract_depth: 'advanced', format: 'text' });
  }

  t.deepEqual(
    results.map((result) => result.url),
    PAGES.map((page) => page.url),
  );
  t.is(results[0].text, [...TAVILY_DOCUMENTS[0]!.rawContent].slice(0, 50).join(''));
  t.false('text' in results[1], 'Tavily listed it in failed_results');
  t.is(results[2].text, [...TAVILY_DOCUMENTS[2]!.rawContent].slice(0, 50).join(''));
  t.is(await metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'tavily-pages', operation: 'content', outcome: 'success' }), 3);
});

const FAILURES: Array<{ failure: TavilyFailure | 'wrong_key'; outcome: string }> = [
  { failure: 'wrong_key', outcome: 'auth' },
  { failure: 'rate_limited', outcome: 'rate_limited' },
  { failure: 'plan_limit', outcome: 'quota' },
  { failure: 'pay_as_you_go_limit', outcome: 'quota' },
  { failure: 'server_error', outcome: 'unavailable' },
  { failure: 'malformed', outcome: 'garbage' },
  { failure: 'stall', outcome: 'timeout' },
];

for (const { failure, outcome } of FAILURES) {
  test(`a ${failure} reply from /extract is read as ${outcome}: the page goes without text, the search still answers`, async (t) => {
    const { tavily, gateway } = await setup(t, { timeoutMs: 150, ...(failure === 'wrong_key' ? { apiKey: 'tvly-wrong-key-0000' } : {}) });
    if (failure !== 'wrong_key') tavily.fail(failure);
    const body = await expectSearchOk(t, await gateway.post('/v1/web-search', textSearch));
    t.is(body.data.webPages.value.length, 3);
    for (const result of body.data.webPages.value) t.false('text' in result);
    t.is(await metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'tavily-pages', operation: 'content', outcome }), 3);
    t.false(JSON.stringify(body).includes(TAVILY_KEY));
    t.false(gateway.logLines.some((line) => line.includes(TAVILY_KEY)));
  });
}
