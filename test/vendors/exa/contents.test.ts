import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import { contentGateway } from '../../helpers/provider-gateways.js';
import { expectContentFailure, upstreamCalls, type FailureCase } from '../../helpers/upstream-errors.js';
import { EXA_DOCUMENTS, EXA_KEY, startFakeExa, type ExaFailure } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

/** Search results with snippets only: two pages Exa knows, one it cannot crawl. */
const PAGES = [
  { url: EXA_DOCUMENTS[0]!.url, name: 'LLM overview', snippet: 'overview' },
  { url: 'https://unknown.example/missing', name: 'Missing', snippet: 'not crawlable' },
  { url: EXA_DOCUMENTS[2]!.url, name: 'Transformer', snippet: 'attention' },
];

async function setup(t: ExecutionContext, provider: Record<string, unknown> = {}) {
  const exa = await startFakeExa();
  const gateway = await contentGateway(t, exa, 'exa-pages', { type: 'exa', baseUrl: exa.url, apiKey: EXA_KEY, ...provider }, PAGES);
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
    t.is(pathOf(request), '/contents');
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
  t.is(await upstreamCalls(gateway, 'exa-pages', 'content', 'success'), 3);
});

const WRONG_KEY = 'exa-wrong-key-0000';

const FAILURES: Array<FailureCase<ExaFailure | 'wrong_key', { kind: string }>> = [
  { failure: 'wrong_key', options: { apiKey: WRONG_KEY }, kind: 'auth' },
  { failure: 'rate_limited', kind: 'rate_limited' },
  { failure: 'no_credits', kind: 'quota' },
  { failure: 'server_error', kind: 'unavailable' },
  { failure: 'malformed', kind: 'garbage' },
  { failure: 'wrong_shape', kind: 'garbage' },
  { failure: 'stall', options: { timeoutMs: 150 }, kind: 'timeout' },
];

for (const { failure, options, kind } of FAILURES) {
  test(`a ${failure} reply from /contents is read as ${kind}: the page goes without text, the search still answers`, async (t) => {
    const { exa, gateway } = await setup(t, options);
    const fail = () => failure !== 'wrong_key' && exa.fail(failure);
    const send = () => gateway.post('/v1/web-search', textSearch);
    await expectContentFailure(t, { gateway, provider: 'exa-pages', secrets: [EXA_KEY, WRONG_KEY], requests: exa.requests, fail, send }, { kind, pages: 3 });
  });
}
