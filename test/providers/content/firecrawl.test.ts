import test, { type ExecutionContext } from 'ava';
import { expectSearchOk, metricValue } from '../../helpers/faults.js';
import { searchEnvelope, sendJson, startGateway, startUpstream } from '../../helpers/gateway.js';
import { FIRECRAWL_HOME, FIRECRAWL_KEY, startFakeFirecrawl, type FirecrawlFault } from '../fakes/firecrawl.js';

/** A snippet-only search upstream returning `urls`, Firecrawl as the content chain. */
async function setup(t: ExecutionContext, urls: string[], provider: Record<string, unknown> = {}) {
  const firecrawl = await startFakeFirecrawl();
  const search = await startUpstream((_request, res) =>
    sendJson(res, 200, searchEnvelope(urls.map((url, i) => ({ name: `Result ${i}`, url, snippet: 'only a snippet' })))),
  );
  const entry = Object.fromEntries(
    Object.entries({ type: 'firecrawl', baseUrl: firecrawl.url, apiKey: FIRECRAWL_KEY, ...provider }).filter(([, value]) => value !== undefined),
  );
  const gateway = await startGateway({
    providers: { up: { type: 'searchgate-compatible', baseUrl: search.url }, fc: entry },
    search: { chain: ['up'] },
    content: { chain: ['fc'], timeBudgetMs: 3000 },
    cache: { enabled: false },
    retry: { retries: 0 },
  });
  t.teardown(async () => {
    await gateway.close();
    await search.close();
    await firecrawl.close();
  });
  return { firecrawl, gateway };
}

const contentCalls = (gateway: Parameters<typeof metricValue>[0], outcome: string) =>
  metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'fc', operation: 'content', outcome });

const searchWithText = (gateway: Awaited<ReturnType<typeof setup>>['gateway'], count = 1) =>
  gateway.post('/v1/web-search', { query: 'firecrawl', count, contents: { text: true } });

test('POST /v2/scrape for markdown of the main content; links and images become plain text', async (t) => {
  const { firecrawl, gateway } = await setup(t, [FIRECRAWL_HOME]);
  const body = await expectSearchOk(t, await searchWithText(gateway));
  const [result] = body.data.webPages.value as any[];
  t.is(
    result.text,
    'Launch Week I is here! See our Day 2 Release 🚀💥 Get 2 months free with yearly plan\n\n' +
      '# Turn websites into LLM-ready data\n\n' +
      'Power your AI apps with clean data crawled from any website.\n\n' +
      '- Docs and pricing (monthly)',
  );

  t.is(firecrawl.requests.length, 1);
  const request = firecrawl.requests[0]!;
  t.is(request.method, 'POST');
  t.is(new URL(request.url, 'http://x').pathname, '/v2/scrape');
  t.is(request.headers.authorization, `Bearer ${FIRECRAWL_KEY}`);
  t.deepEqual(request.body, { url: FIRECRAWL_HOME, formats: ['markdown'], onlyMainContent: true, timeout: 28_500 });
});

test('onlyMainContent and the scrape timeout follow the config; without a key the call is keyless', async (t) => {
  const { firecrawl, gateway } = await setup(t, [FIRECRAWL_HOME], { apiKey: undefined, onlyMainContent: false, timeoutMs: 5_000 });
  const body = await expectSearchOk(t, await searchWithText(gateway));
  t.true((body.data.webPages.value[0] as any).text.startsWith('Launch Week I is here!'));
  const request = firecrawl.requests[0]!;
  t.is(request.headers.authorization, undefined);
  t.deepEqual(request.body, { url: FIRECRAWL_HOME, formats: ['markdown'], onlyMainContent: false, timeout: 3_500 });
});

test("the page's own failures (404 page, scrape timeout, DNS, unsupported site, site error) give no text and do not count against Firecrawl", async (t) => {
  const urls = [
    FIRECRAWL_HOME,
    'https://example.com/missing',
    'https://slow.example/page',
    'https://no-such-host.example/',
    'https://unsupported.example/profile',
    'https://refused.example/',
  ];
  const { firecrawl, gateway } = await setup(t, urls);
  const body = await expectSearchOk(t, await searchWithText(gateway, urls.length));
  const results = body.data.webPages.value as any[];
  t.deepEqual(results.map((result) => result.url), urls);
  t.truthy(results[0].text);
  for (const result of results.slice(1)) t.false('text' in result, result.url);
  t.is(firecrawl.requests.length, urls.length);
  t.is(await contentCalls(gateway, 'success'), urls.length);
});

test("a site error of Firecrawl's own proxy is Firecrawl's failure", async (t) => {
  const { gateway } = await setup(t, ['https://proxied.example/']);
  const body = await expectSearchOk(t, await searchWithText(gateway));
  t.false('text' in body.data.webPages.value[0]!);
  t.is(await contentCalls(gateway, 'unavailable'), 1);
});

const FAILURES: Array<{ failure: FirecrawlFault | 'wrong_key'; outcome: string }> = [
  { failure: 'wrong_key', outcome: 'auth' },
  { failure: 'rate_limited', outcome: 'rate_limited' },
  { failure: 'quota', outcome: 'quota' },
  { failure: 'concurrency_timeout', outcome: 'rate_limited' },
  { failure: 'server_error', outcome: 'unavailable' },
  { failure: 'malformed', outcome: 'garbage' },
  { failure: 'wrong_shape', outcome: 'garbage' },
  { failure: 'stall', outcome: 'timeout' },
];

for (const { failure, outcome } of FAILURES) {
  test(`Firecrawl failure ${failure} is a provider failure (${outcome}); the search answers without that text`, async (t) => {
    const { firecrawl, gateway } = await setup(t, [FIRECRAWL_HOME], {
      // Only the stall needs a short timeout; a loaded machine may take longer than that to answer.
      ...(failure === 'stall' ? { timeoutMs: 150 } : {}),
      ...(failure === 'wrong_key' ? { apiKey: 'fc-wrong-key-0000000000' } : {}),
    });
    if (failure !== 'wrong_key') firecrawl.fail(failure);
    const response = await searchWithText(gateway);
    const text = await response.text();
    t.is(response.status, 200, text);
    t.false('text' in JSON.parse(text).data.webPages.value[0]);
    t.is(await contentCalls(gateway, outcome), 1);
    t.is(await contentCalls(gateway, 'success'), 0);
    t.false(text.includes(FIRECRAWL_KEY));
    t.false(gateway.logLines.some((line) => line.includes(FIRECRAWL_KEY)));
  });
}
