import test from 'ava';
import { sendJson, startGateway, startUpstream } from '../helpers/gateway.js';
import { pageTextType, pagedSearchType } from '../helpers/test-providers.js';

const providerTypes = { 'test-paged': pagedSearchType, 'test-page-text': pageTextType };

/** 120 results; odd ones on allowed.example, even ones elsewhere. */
const CORPUS = Array.from({ length: 120 }, (_, i) => ({
  url: i % 2 ? `https://allowed.example/${i}` : `https://other.example/${i}`,
  title: `Result ${i}`,
  snippet: `snippet ${i}`,
}));

async function pagedUpstream(corpus = CORPUS) {
  return startUpstream((request, res) => {
    const url = new URL(request.url, 'http://x');
    const offset = Number(url.searchParams.get('offset'));
    const limit = Number(url.searchParams.get('limit'));
    sendJson(res, 200, { items: corpus.slice(offset, offset + limit) });
  });
}

test('count is honoured by paging through an upstream with a small page size', async (t) => {
  const upstream = await pagedUpstream();
  const gateway = await startGateway(
    { providers: { paged: { type: 'test-paged', baseUrl: upstream.url, maxPageSize: 20 } }, search: { chain: ['paged'] }, cache: { enabled: false } },
    { providerTypes },
  );
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const body = (await (await gateway.post('/v1/web-search', { query: 'q', count: 50 })).json()) as any;
  t.is(body.data.webPages.value.length, 50);
  t.deepEqual(body.data.webPages.value.map((r: any) => r.name), CORPUS.slice(0, 50).map((r) => r.title));
  t.deepEqual(upstream.requests.map((r) => new URL(r.url, 'http://x').searchParams.get('offset')), ['0', '20', '40']);
});

test('domain filters the upstream lacks: over-fetch, filter, keep paging until count is met', async (t) => {
  const upstream = await pagedUpstream();
  const gateway = await startGateway(
    {
      providers: { paged: { type: 'test-paged', baseUrl: upstream.url, maxPageSize: 20 } },
      search: { chain: ['paged'], overFetchFactor: 2, maxPagesPerRequest: 5 },
      cache: { enabled: false },
    },
    { providerTypes },
  );
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  const body = (await (await gateway.post('/v1/web-search', { query: 'q', count: 25, includeDomains: ['allowed.example'] })).json()) as any;
  const urls = body.data.webPages.value.map((r: any) => r.url);
  t.is(urls.length, 25);
  t.true(urls.every((url: string) => url.startsWith('https://allowed.example/')));
  t.deepEqual(urls.slice(0, 3), ['https://allowed.example/1', 'https://allowed.example/3', 'https://allowed.example/5']);
  t.true(body.data.webPages.someResultsRemoved);
  t.is(upstream.requests.length, 3, '20 + 20 + 20 upstream results give 30 allowed ones');

  // The page budget bounds the work when matches are rare.
  const rare = (await (await gateway.post('/v1/web-search', { query: 'q', count: 10, includeDomains: ['nowhere.example'] })).json()) as any;
  t.deepEqual(rare.data.webPages.value, []);
  t.is(upstream.requests.length, 3 + 5);
});

test('text mode fills page text through the content chain when the search upstream has only snippets', async (t) => {
  const search = await pagedUpstream(CORPUS.slice(0, 4));
  let slowReleased = false;
  const content = await startUpstream((request, res) => {
    const page = new URL(request.url, 'http://x').searchParams.get('url')!;
    if (page.endsWith('/0')) {
      sendJson(res, 404, { message: 'not found' });
    } else if (page.endsWith('/2')) {
      // Slower than the content budget: the result stays, without text.
      setTimeout(() => {
        slowReleased = true;
        sendJson(res, 200, { text: 'too late' });
      }, 1500);
    } else {
      sendJson(res, 200, { text: `Full text of ${page} — ${'😀'.repeat(20)}` });
    }
  });
  const gateway = await startGateway(
    {
      providers: { paged: { type: 'test-paged', baseUrl: search.url, maxPageSize: 20 }, pages: { type: 'test-page-text', baseUrl: content.url } },
      search: { chain: ['paged'] },
      content: { chain: ['pages'], timeBudgetMs: 400 },
      cache: { enabled: false },
    },
    { providerTypes },
  );
  t.teardown(async () => {
    await gateway.close();
    await search.close();
    await content.close();
  });
  const response = await gateway.post('/v1/web-search', { query: 'q', count: 4, contents: { text: { max_characters: 45 } } });
  t.is(response.status, 200);
  const results = ((await response.json()) as any).data.webPages.value;
  t.is(results.length, 4, 'a page without text keeps its result');
  t.false('text' in results[0], 'the page the content provider does not have');
  t.false('text' in results[2], 'the page that came too late');
  t.is(results[1].text, [...`Full text of https://allowed.example/1 — ${'😀'.repeat(20)}`].slice(0, 45).join(''));
  t.is([...results[1].text].length, 45);
  t.true(results[3].text?.startsWith('Full text of https://allowed.example/3'), JSON.stringify(results[3]));
  for (const result of results) t.false('snippet' in result);
  // Answered before the slow page was: the budget ended the wait (no wall-clock bound, which a
  // loaded machine breaks; the slow page's own release is the clock).
  t.false(slowReleased, 'answered only after the slow page');
});
