import test, { type ExecutionContext } from 'ava';
import { expectSearchOk, metricValue } from '../../helpers/faults.js';
import { sendJson, startGateway, startUpstream } from '../../helpers/gateway.js';
import { pagedSearchType } from '../../helpers/test-providers.js';
import { EXA_DOCUMENTS, EXA_KEY, startFakeExa, type ExaFailure } from '../fakes/exa.js';

/** Search results with snippets only: two pages Exa knows, one it cannot crawl. */
const PAGES = [
  { url: EXA_DOCUMENTS[0]!.url, title: 'LLM overview', snippet: 'overview' },
  { url: 'https://unknown.example/missing', title: 'Missing', snippet: 'not crawlable' },
  { url: EXA_DOCUMENTS[2]!.url, title: 'Transformer', snippet: 'attention' },
];

async function setup(t: ExecutionContext, provider: Record<string, unknown> = {}) {
  const exa = await startFakeExa();
  const search = await startUpstream((_request, res) => sendJson(res, 200, { items: PAGES }));
  const gateway = await startGateway(
    {
      providers: {
        snippets: { type: 'test-paged', baseUrl: search.url, maxPageSize: 10 },
        'exa-pages': { type: 'exa', baseUrl: exa.url, apiKey: EXA_KEY, ...provider },
      },
      search: { chain: ['snippets'] },
      content: { chain: ['exa-pages'], timeBudgetMs: 2_000 },
      cache: { enabled: false },
    },
    { providerTypes: { 'test-paged': pagedSearchType } },
  );
  t.teardown(async () => {
    await gateway.close();
    await search.close();
    await exa.close();
  });
  return { exa, gateway };
}

const textSearch = { query: 'llm', count: 3, contents: { text: { max_characters: 60 } } };

test('text mode: page text from POST /contents {urls, text.maxCharacters}; an uncrawlable page keeps its result without text', async (t) => {
  const { exa, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', textSearch));
  const results = body.data.webPages.value as any[];

  t.is(exa.requests.length, 3, 'one /contents call per page');
  for (const request of exa.requests) {
    t.is(request.method, 'POST');
    t.is(new URL(request.url, 'http://x').pathname, '/contents');
    t.is(request.headers['x-api-key'], EXA_KEY);
  }
  t.deepEqual(
    exa.requests.map((request) => request.body).sort((a, b) => a.urls[0].localeCompare(b.urls[0])),
    PAGES.map((page) => ({ urls: [page.url], text: { maxCharacters: 60 } })).sort((a, b) => a.urls[0]!.localeCompare(b.urls[0]!)),
  );

  t.deepEqual(
    results.map((result) => result.url),
    PAGES.map((page) => page.url),
  );
  t.is(results[0].text, EXA_DOCUMENTS[0]!.text.slice(0, 60));
  t.false('text' in results[1], 'Exa reported CRAWL_NOT_FOUND for it in statuses');
  t.is(results[2].text, EXA_DOCUMENTS[2]!.text.slice(0, 60));
  t.is(await metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'exa-pages', operation: 'content', outcome: 'success' }), 3);
});

const FAILURES: Array<{ failure: ExaFailure | 'wrong_key'; outcome: string }> = [
  { failure: 'wrong_key', outcome: 'auth' },
  { failure: 'rate_limited', outcome: 'rate_limited' },
  { failure: 'no_credits', outcome: 'quota' },
  { failure: 'server_error', outcome: 'unavailable' },
  { failure: 'malformed', outcome: 'garbage' },
  { failure: 'wrong_shape', outcome: 'garbage' },
  { failure: 'stall', outcome: 'timeout' },
];

for (const { failure, outcome } of FAILURES) {
  test(`a ${failure} reply from /contents is read as ${outcome}: the page goes without text, the search still answers`, async (t) => {
    const { exa, gateway } = await setup(t, { timeoutMs: 150, ...(failure === 'wrong_key' ? { apiKey: 'exa-wrong-key-0000' } : {}) });
    if (failure !== 'wrong_key') exa.fail(failure);
    const response = await gateway.post('/v1/web-search', textSearch);
    const body = await expectSearchOk(t, response);
    t.is(body.data.webPages.value.length, 3);
    for (const result of body.data.webPages.value) t.false('text' in result);
    t.is(await metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'exa-pages', operation: 'content', outcome }), 3);
    t.false(JSON.stringify(body).includes(EXA_KEY));
    t.false(gateway.logLines.some((line) => line.includes(EXA_KEY)));
  });
}
