import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { contentGateway } from '../../helpers/provider-gateways.js';
import { expectContentFailure, upstreamCalls, type FailureCase } from '../../helpers/upstream-errors.js';
import { FIRECRAWL_HOME, FIRECRAWL_KEY, startFakeFirecrawl, type FirecrawlFault } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

/** A snippet-only search upstream returning `urls`, Firecrawl as the content chain. */
async function setup(t: ExecutionContext, urls: string[], provider: Record<string, unknown> = {}) {
  const firecrawl = await startFakeFirecrawl();
  const gateway = await contentGateway(t, firecrawl, 'fc', { type: 'firecrawl', baseUrl: firecrawl.url, apiKey: FIRECRAWL_KEY, ...provider }, urls);
  return { firecrawl, gateway };
}

const contentCalls = (gateway: RunningGateway, outcome: string) => upstreamCalls(gateway, 'fc', 'content', outcome);

const searchWithText = (gateway: RunningGateway, count = 1) => gateway.post('/v1/web-search', { query: 'firecrawl', count, contents: { text: true } });

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
  t.is(pathOf(request), '/v2/scrape');
  t.is(request.headers.authorization, `Bearer ${FIRECRAWL_KEY}`);
  t.deepEqual(request.body, { url: FIRECRAWL_HOME, formats: ['markdown'], onlyMainContent: true, timeout: 28_500 });
});

test('format "markdown": the text is Firecrawl\'s markdown as it came, links and images included', async (t) => {
  const { firecrawl, gateway } = await setup(t, [FIRECRAWL_HOME]);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'firecrawl', contents: { text: { format: 'markdown' } } }));
  const text: string = (body.data.webPages.value[0] as any).text;
  t.true(text.startsWith('Launch Week I is here! [See our Day 2 Release 🚀](https://www.firecrawl.dev/blog/launch-week-i-day-2-doubled-rate-limits)'), text);
  t.true(text.includes('[![Firecrawl logo](https://www.firecrawl.dev/logo.png)](https://www.firecrawl.dev/)'));
  t.true(text.includes('- [Docs](https://docs.firecrawl.dev)'));
  t.deepEqual(firecrawl.requests[0]!.body.formats, ['markdown']);
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

const WRONG_KEY = 'fc-wrong-key-0000000000';

const FAILURES: Array<FailureCase<FirecrawlFault | 'wrong_key', { kind: string }>> = [
  { failure: 'wrong_key', options: { apiKey: WRONG_KEY }, kind: 'auth' },
  { failure: 'rate_limited', kind: 'rate_limited' },
  { failure: 'quota', kind: 'quota' },
  { failure: 'concurrency_timeout', kind: 'rate_limited' },
  { failure: 'server_error', kind: 'unavailable' },
  { failure: 'malformed', kind: 'garbage' },
  { failure: 'wrong_shape', kind: 'garbage' },
  { failure: 'stall', options: { timeoutMs: 150 }, kind: 'timeout' },
];

for (const { failure, options, kind } of FAILURES) {
  test(`Firecrawl failure ${failure} is a provider failure (${kind}); the search answers without that text`, async (t) => {
    const { firecrawl, gateway } = await setup(t, [FIRECRAWL_HOME], options);
    const fail = () => failure !== 'wrong_key' && firecrawl.fail(failure);
    const send = () => searchWithText(gateway);
    await expectContentFailure(t, { gateway, provider: 'fc', secrets: [FIRECRAWL_KEY, WRONG_KEY], requests: firecrawl.requests, fail, send }, { kind, pages: 1 });
  });
}
