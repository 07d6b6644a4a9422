import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import { contentGateway } from '../../helpers/provider-gateways.js';
import { expectContentFailure, upstreamCalls, type FailureCase } from '../../helpers/upstream-errors.js';
import { TAVILY_DOCUMENTS, TAVILY_KEY, startFakeTavily, type TavilyFailure } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

/** Search results with snippets only: two pages Tavily can extract, one it cannot. */
const PAGES = [
  { url: TAVILY_DOCUMENTS[0]!.url, name: 'Britannica', snippet: 'facts' },
  { url: 'https://unknown.example/missing', name: 'Missing', snippet: 'not extractable' },
  { url: TAVILY_DOCUMENTS[2]!.url, name: 'ESPN', snippet: 'contract' },
];

async function setup(t: ExecutionContext, provider: Record<string, unknown> = {}) {
  const tavily = await startFakeTavily();
  const gateway = await contentGateway(t, tavily, 'tavily-pages', { type: 'tavily', baseUrl: tavily.url, apiKey: TAVILY_KEY, ...provider }, PAGES);
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
    t.is(pathOf(request), '/extract');
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
  t.is(await upstreamCalls(gateway, 'tavily-pages', 'content', 'success'), 3);
});

test('format "markdown": /extract is asked for markdown whatever the configured format, and its raw content is the text', async (t) => {
  const { tavily, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { ...textSearch, contents: { text: { max_characters: 50, format: 'markdown' } } }));
  for (const request of tavily.requests) t.is(request.body.format, 'markdown');
  t.is((body.data.webPages.value[0] as any).text, [...TAVILY_DOCUMENTS[0]!.rawContent].slice(0, 50).join(''));
});

const WRONG_KEY = 'tvly-wrong-key-0000';

const FAILURES: Array<FailureCase<TavilyFailure | 'wrong_key', { kind: string }>> = [
  { failure: 'wrong_key', options: { apiKey: WRONG_KEY }, kind: 'auth' },
  { failure: 'rate_limited', kind: 'rate_limited' },
  { failure: 'plan_limit', kind: 'quota' },
  { failure: 'pay_as_you_go_limit', kind: 'quota' },
  { failure: 'server_error', kind: 'unavailable' },
  { failure: 'malformed', kind: 'garbage' },
  { failure: 'stall', options: { timeoutMs: 150 }, kind: 'timeout' },
];

for (const { failure, options, kind } of FAILURES) {
  test(`a ${failure} reply from /extract is read as ${kind}: the page goes without text, the search still answers`, async (t) => {
    const { tavily, gateway } = await setup(t, options);
    const fail = () => failure !== 'wrong_key' && tavily.fail(failure);
    const send = () => gateway.post('/v1/web-search', textSearch);
    await expectContentFailure(t, { gateway, provider: 'tavily-pages', secrets: [TAVILY_KEY, WRONG_KEY], requests: tavily.requests, fail, send }, { kind, pages: 3 });
  });
}
