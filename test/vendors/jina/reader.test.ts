import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import type { RunningGateway } from '../../helpers/gateway.js';
import { contentGateway } from '../../helpers/provider-gateways.js';
import { expectContentFailure, upstreamCalls, type FailureCase } from '../../helpers/upstream-errors.js';
import { JINA_KEY, startFakeJina, type JinaFault, type ReaderPage } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

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
  const gateway = await contentGateway(t, jina, 'reader', { type: 'jina', readerBaseUrl: jina.readerBaseUrl, apiKey: JINA_KEY, ...provider }, urls);
  return { jina, gateway };
}

const contentCalls = (gateway: RunningGateway, outcome: string) => upstreamCalls(gateway, 'reader', 'content', outcome);

test('text mode fills page text from the Reader: POST r.jina.ai/ {url}, main content with links reduced to their text', async (t) => {
  const { jina, gateway } = await setup(t, [ARTICLE]);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'page text', contents: { text: true } }));
  const [result] = body.data.webPages.value as any[];
  t.is(result.text, '# How page text is filled\n\nThe gateway asks the Reader for pages without text.');
  t.false('snippet' in result);

  t.is(jina.requests.length, 1);
  const request = jina.requests[0]!;
  t.is(request.method, 'POST');
  t.is(pathOf(request), '/r/');
  t.deepEqual(request.body, { url: ARTICLE });
  t.is(request.headers.authorization, `Bearer ${JINA_KEY}`);
  t.is(request.headers.accept, 'application/json');
  t.is(request.headers['x-md-link-style'], 'discarded');
  t.is(request.headers['x-retain-images'], 'none');
  t.is(request.headers['x-return-format'], undefined);
});

test('format "markdown": a deployment reading innerText asks the Reader for its markdown content for that request', async (t) => {
  const { jina, gateway } = await setup(t, [ARTICLE], { readerFormat: 'text' });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'page text', contents: { text: { format: 'markdown' } } }));
  t.is((body.data.webPages.value[0] as any).text, '# How page text is filled\n\nThe gateway asks the Reader for pages without text.');
  t.is(jina.requests[0]!.headers['x-return-format'], undefined);
  t.is(jina.requests[0]!.headers['x-md-link-style'], 'discarded');

  // A plain request still reads innerText.
  const plain = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'page text', contents: { text: true } }));
  t.is((plain.data.webPages.value[0] as any).text, INNER_TEXT);
  t.is(jina.requests[1]!.headers['x-return-format'], 'text');
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

const WRONG_KEY = 'jina_wrong_key_000000';

const FAILURES: Array<FailureCase<JinaFault | 'wrong_key', { kind: string }>> = [
  { failure: 'wrong_key', options: { apiKey: WRONG_KEY }, kind: 'auth' },
  { failure: 'rate_limited', kind: 'rate_limited' },
  { failure: 'quota', kind: 'quota' },
  { failure: 'quota_in_200', kind: 'quota' },
  { failure: 'server_error', kind: 'unavailable' },
  { failure: 'malformed', kind: 'garbage' },
  { failure: 'wrong_shape', kind: 'garbage' },
  { failure: 'stall', options: { timeoutMs: 150 }, kind: 'timeout' },
];

for (const { failure, options, kind } of FAILURES) {
  test(`Reader failure ${failure} is a provider failure (${kind}); the search answers without that text`, async (t) => {
    const { jina, gateway } = await setup(t, [ARTICLE], options);
    const fail = () => failure !== 'wrong_key' && jina.fail(failure);
    const send = () => gateway.post('/v1/web-search', { query: 'page text', contents: { text: true } });
    await expectContentFailure(t, { gateway, provider: 'reader', secrets: [JINA_KEY, WRONG_KEY], requests: jina.requests, fail, send }, { kind, pages: 1 });
  });
}
