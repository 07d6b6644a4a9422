import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { openLocalIndex } from '../../../src/local/index/index.js';
import type { LocalIndex } from '../../../src/local/types.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../../helpers/gateway.js';

const ARTICLE = (title: string, body: string) => `<!doctype html><html lang="en"><head><title>${title}</title>
<meta property="article:published_time" content="2024-02-03T04:05:06Z"></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/contact">Contact</a></nav>
<article><h1>${title}</h1>${body.split('\n').map((p) => `<p>${p}</p>`).join('')}</article>
<footer>Copyright 2024 Example Corp. All rights reserved. <a href="/privacy">Privacy</a></footer></body></html>`;

const BODY = [
  'The gateway fetches pages for results that came without text, within a time budget per request.',
  'It extracts the main text with boilerplate such as navigation and footers removed, off the event loop.',
  'A page that cannot be fetched in time keeps its result, without text, and never fails the request.',
].join('\n');

/** The page the gateway adds to the index in the background, once it is there (null after 15 s). */
async function storedSoon(index: LocalIndex, url: string) {
  for (let waited = 0; waited < 15_000; waited += 100) {
    const stored = await index.get(url);
    if (stored) return stored;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}

async function setup(t: any, localOptions: Record<string, unknown>) {
  const site = await startUpstream((request, res) => {
    if (request.url === '/article') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(ARTICLE('How page text is filled', BODY));
    } else if (request.url === '/challenge') {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<html><head><title>Just a moment...</title></head><body>Checking your browser before accessing the site.</body></html>');
    } else {
      res.writeHead(404).end();
    }
  });
  const results = ['/article', '/challenge', '/missing'].map((path, i) => ({ url: `${site.url}${path}`, name: `R${i}`, snippet: 'only a snippet' }));
  const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope(results)));
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-content-'));
  const gateway = await startGateway({
    ...upstreamConfig(upstream.url),
    providers: {
      up: { type: 'searchgate-compatible', baseUrl: upstream.url },
      local: { type: 'local', directory, ...localOptions },
    },
    content: { chain: ['local'], timeBudgetMs: 5000 },
    cache: { enabled: false },
  });
  let open = true;
  const closeGateway = async () => {
    if (open) await gateway.close();
    open = false;
  };
  t.teardown(async () => {
    await closeGateway();
    await upstream.close();
    await site.close();
  });
  return { gateway, site, directory, closeGateway };
}

test('text mode fetches and extracts the pages of a snippet-only upstream; challenges and failures yield no text', async (t) => {
  const { gateway, site, directory } = await setup(t, { allowPrivateNetworks: true, addFetchedPages: true });
  const response = await gateway.post('/v1/web-search', { query: 'page text', contents: { text: true } });
  t.is(response.status, 200);
  const [article, challenge, missing] = ((await response.json()) as any).data.webPages.value;
  t.true(article.text.includes('The gateway fetches pages for results that came without text'));
  t.true(article.text.includes('never fails the request'));
  t.false(/Copyright|Privacy|Contact/.test(article.text), 'boilerplate removed');
  t.false('snippet' in article);
  t.false('text' in challenge, 'a challenge page is never returned as text');
  t.false('text' in missing);
  t.is(site.requests.filter((r) => r.url === '/article').length, 1);

  // addFetchedPages: the fetched page is added to the local index in the background.
  const index = await openLocalIndex(directory, { readConsistencyMs: 0 });
  const stored = await storedSoon(index, `${site.url}/article`);
  await index.close();
  // With vectors of the embedded model, as `index add` would store it, so hybrid search can score it
  // (read by an index opened now: the one above opened before the index had vector columns).
  const reopened = await openLocalIndex(directory);
  const vectors = (await reopened.stats()).vectors;
  await reopened.close();
  t.truthy(stored);
  t.deepEqual(Object.values(vectors), [1], JSON.stringify(vectors));
  t.regex(Object.keys(vectors)[0] ?? '', /^all-minilm-l6-v2/);
  t.is(stored!.title, 'How page text is filled');
  t.is(stored!.datePublished, '2024-02-03T04:05:06.000Z');
  await gateway.post('/v1/web-search', { query: 'page text again', contents: { text: true } });
  t.is(site.requests.filter((r) => r.url === '/article').length, 1, 'not fetched again');
});

test('fetched pages go through the index writer: appended at once, never folded one by one, and searchable when the gateway closes', async (t) => {
  const { gateway, site, directory, closeGateway } = await setup(t, { allowPrivateNetworks: true, addFetchedPages: true });
  t.is((await gateway.post('/v1/web-search', { query: 'page text', contents: { text: true } })).status, 200);
  const index = await openLocalIndex(directory, { readConsistencyMs: 0 });
  t.teardown(() => index.close());
  const stored = await storedSoon(index, `${site.url}/article`);
  t.truthy(stored, 'appended within the writer\'s batch delay');
  // Appended but not folded: a fold of its own per page would rewrite the whole table each time.
  t.true((await index.unindexedRows()) > 0, 'the page is not folded on its own');

  await closeGateway();
  t.true((await index.unindexedRows()) > 0, 'a few pages are left to the searches\' scan: no fold rewrote the table on the way out');
  const { hits } = await index.search({ query: 'gateway fetches pages', limit: 5, offset: 0, includeDomains: [], excludeDomains: [], window: null });
  t.true(hits.some((hit) => hit.page.url === `${site.url}/article`), 'a search finds the page');
});

test('the content fetcher refuses loopback addresses unless the operator allows them', async (t) => {
  const { gateway, site } = await setup(t, {});
  const response = await gateway.post('/v1/web-search', { query: 'ssrf', contents: { text: true } });
  t.is(response.status, 200, 'a refused page never fails the request');
  const results = ((await response.json()) as any).data.webPages.value;
  t.is(results.length, 3);
  for (const result of results) t.false('text' in result);
  t.is(site.requests.length, 0, 'no request reached the loopback site');
});

test('pages fetched for text are kept for a while, so the next answer does not fetch them again', async (t) => {
  const { gateway, site } = await setup(t, { allowPrivateNetworks: true });
  await gateway.post('/v1/web-search', { query: 'first', contents: { text: true } });
  const second = await gateway.post('/v1/web-search', { query: 'second', contents: { text: true } });
  const [article] = ((await second.json()) as any).data.webPages.value;
  t.true(article.text.includes('The gateway fetches pages'));
  t.is(site.requests.filter((r) => r.url === '/article').length, 1);
});
