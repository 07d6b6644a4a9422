import test, { type ExecutionContext } from 'ava';
import { expectSearchOk, metricValue } from '../../helpers/faults.js';
import { searchEnvelope, sendJson, startGateway, startUpstream } from '../../helpers/gateway.js';
import { JINA_KEY, startFakeJina, type JinaFault, type ReaderPage } from '../fakes/jina.js';

const ARTICLE = 'https://site.example/article';

const INNER_TEXT = 'Home About Contact\nHow page text is filled\nThe gateway asks the Reader for pages without text.\n© 2025';

const PAGES: Record<string, ReaderPage> = {
  [ARTICLE]: {
    kind: 'ok',
    title: 'How page text is filled',
    content: '# How page text is filled\n\nThe gateway asks the [Reader](https://jina.ai/reader) for pages without text.',
    text: INNER_TEXT,
    publishedTime: '2025-01-02T03:04:05Z',
  },
  'https://slow.example/never': { kind: 'unreachable' },
  'https://blocked.example/page': { kind: 'blocked' },
  'https://site.example/gone': { kind: 'target404' },
};

/** A snippet-only search upstream returning `urls`, a Jina Reader as the content chain. */
async function setup(t: ExecutionContext, urls: string[], provider: Record<string, unknown> = {}) {
  const jina = await startFakeJina({ pages: PAGES });
  const search = await startUpstream((_request, res) =>
    sendJson(res, 200, searchEnvelope(urls.map((url, i) => ({ name: `Result ${i}`, url, snippet: 'only a snippet' })))),
  );
  const entry = Object.fromEntries(
    Object.entries({ type: 'jina', readerBaseUrl: jina.readerBaseUrl, apiKey: JINA_KEY, ...provider }).filter(([, value]) => value !== undefined),
  );
  const gateway = await startGateway({
    providers: { up: { type: 'searchgate-compatible', baseUrl: search.url }, reader: entry },
    search: { chain: ['up'] },
    content: { chain: ['reader'], timeBudgetMs: 3000 },
    cache: { enabled: false },
    retry: { retries: 0 },
  });
  t.teardown(async () => {
    await gateway.close();
    await search.close();
    await jina.close();
  });
  return { jina, gateway };
}

const contentCalls = (gateway: Parameters<typeof metricValue>[0], outcome: string) =>
  metricValue(gateway, 'searchgate_upstream_requests_total', { provider: 'reader', operation: 'content', outcome });

test('text mode fills page text from the Reader: POST r.jina.ai/ {url}, main content with links reduced to their text', async (t) => {
  const { jina, gateway } = await setup(t, [ARTICLE]);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'page text', contents: { text: true } }));
  const [result] = body.data.webPages.value as any[];
  t.is(result.text, '# How page text is filled\n\nThe gateway asks the Reader for pages without text.');
  t.false('snippet' in result);

  t.is(jina.requests.length, 1);
  const request = jina.requests[0]!;
  t.is(request.method, 'POST');
  t.is(new URL(request.url, 'http://x').pathname, '/r/');
  t.deepEqual(request.body, { url: ARTICLE });
  t.is(request.headers.authorization, `Bearer ${JINA_KEY}`);
  t.is(request.headers.accept, 'application/json');
  t.is(request.headers['x-md-link-style'], 'discarded');
  t.is(request.headers['x-retain-images'], 'none');
  t.is(request.headers['x-return-format'], undefined);
});

test('without a key the Reader is called anonymously; readerFormat text asks for innerText', async (t) => {
  const { jina, gateway } = await setup(t, [ARTICLE], { apiKey: undefined, readerFormat: 'text' });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'page text', contents: { text: { max_characters: 40 } } }));
  t.is((body.data.webPages.value[0] as any).text, INNER_TEXT.slice(0, 40));
  t.is(jina.requests[0]!.headers.authorization, undefined);
  t.is(jina.requests[0]!.headers['x-return-format'], 'text');
});

test('pages the Reader cannot read (422, 451, a target 404, unknown) get no text and are not charged to the provider', async (t) => {
  const urls = [ARTICLE, 'https://slow.example/never', 'https://blocked.example/page', 'https://site.example/gone', 'https://site.example/unknown'];
  const { jina, gateway } = await setup(t, urls);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'page text', count: 5, contents: { text: true } }));
  const results = body.data.webPages.value as any[];
  t.deepEqual(results.map((result) => result.url), urls);
  t.truthy(results[0].text);
  for (const result of results.slice(1)) t.false('text' in result, result.url);
  t.is(jina.requests.length, 5);
  t.is(await contentCalls(gateway, 'success'), 5);
});

const FAILURES: Array<{ failure: JinaFault | 'wrong_key'; outcome: string }> = [
  { failure: 'wrong_key', outcome: 'auth' },
  { failure: 'rate_limited', outcome: 'rate_limited' },
  { failure: 'quota', outcome: 'quota' },
  { failure: 'quota_in_200', outcome: 'quota' },
  { failure: 'server_error', outcome: 'unavailable' },
  { failure: 'malformed', outcome: 'garbage' },
  { failure: 'wrong_shape', outcome: 'garbage' },
  { failure: 'stall', outcome: 'timeout' },
];

for (const { failure, outcome } of FAILURES) {
  test(`Reader failure ${failure} is a provider failure (${outcome}); the search answers without that text`, async (t) => {
    const overrides = {
      // Only the stall needs a short timeout: a loaded machine may take longer than that to answer.
      ...(failure === 'stall' ? { timeoutMs: 150 } : {}),
      ...(failure === 'wrong_key' ? { apiKey: 'jina_wrong_key_000000' } : {}),
    };
    const { jina, gateway } = await setup(t, [ARTICLE], overrides);
    if (failure !== 'wrong_key') jina.fail(failure);
    const response = await gateway.post('/v1/web-search', { query: 'page text', contents: { text: true } });
    const text = await response.text();
    t.is(response.status, 200, text);
    t.false('text' in JSON.parse(text).data.webPages.value[0]);
    t.is(await contentCalls(gateway, outcome), 1);
    t.is(await contentCalls(gateway, 'success'), 0);
    t.false(text.includes(JINA_KEY));
    t.false(gateway.logLines.some((line) => line.includes(JINA_KEY)));
  });
}
