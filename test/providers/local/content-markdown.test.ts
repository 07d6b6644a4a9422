import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { openLocalIndex } from '../../../src/local/index/index.js';
import { contentHash } from '../../../src/local/ingest/indexed-page.js';
import { searchEnvelope, sendJson, startGateway, startUpstream } from '../../helpers/gateway.js';

/** A documentation page written for this test: sections, a list, a table and a code block. */
const GUIDE = `<!doctype html><html lang="en"><head><title>Installing the widget tool</title></head><body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a> <a href="/blog">Blog</a></nav>
<main><article>
<h1>Installing the widget tool</h1>
<p>The widget tool turns a folder of notes into a searchable catalogue in a few seconds on any laptop.</p>
<h2>Requirements</h2>
<ul><li>A recent operating system with a terminal</li><li>About two hundred megabytes of free disk space</li></ul>
<h2>Options</h2>
<table><thead><tr><th>Flag</th><th>Meaning</th></tr></thead>
<tbody><tr><td>--quiet</td><td>prints nothing but errors</td></tr><tr><td>--watch</td><td>rebuilds when a note changes</td></tr></tbody></table>
<h2>First run</h2>
<p>Run the tool once by hand before adding it to <a href="/docs/scheduler">a scheduler</a>, so that its questions can be answered.</p>
<pre><code>widget init ./notes
widget build --quiet</code></pre>
</article></main>
<footer>Copyright 2025 Widget Makers. <a href="/privacy">Privacy</a></footer></body></html>`;

const STORED_TEXT = 'This page is kept in the local index as plain text. Its words were written for this test only.';
const STORED_MARKDOWN_TEXT = 'Crawled page\nThe index keeps this page with its markdown.';
const STORED_MARKDOWN = '## Crawled page\n\nThe index keeps this page with its **markdown**.';

async function setup(t: ExecutionContext, cache: boolean) {
  const site = await startUpstream((request, res) => {
    if (request.url === '/guide') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(GUIDE);
    } else {
      res.writeHead(404).end();
    }
  });
  const stored = `${site.url}/stored`;
  const storedWithMarkdown = `${site.url}/stored-markdown`;
  const results = [
    { url: `${site.url}/guide`, name: 'Guide', snippet: 'only a snippet' },
    { url: stored, name: 'Stored', snippet: 'only a snippet' },
    { url: storedWithMarkdown, name: 'Stored with markdown', snippet: 'only a snippet' },
  ];
  const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope(results)));
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-markdown-'));
  const index = await openLocalIndex(directory);
  await index.upsert([
    { url: stored, canonicalUrl: stored, title: 'Stored', text: STORED_TEXT, datePublished: null, domain: '127.0.0.1', language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(STORED_TEXT) },
    {
      url: storedWithMarkdown,
      canonicalUrl: storedWithMarkdown,
      title: 'Stored with markdown',
      text: STORED_MARKDOWN_TEXT,
      markdown: STORED_MARKDOWN,
      datePublished: null,
      domain: '127.0.0.1',
      language: 'en',
      fetchedAt: '2026-11-01T00:00:00.000Z',
      contentHash: contentHash(STORED_MARKDOWN_TEXT),
    },
  ]);
  await index.close();
  const gateway = await startGateway({
    providers: {
      up: { type: 'searchgate-compatible', baseUrl: upstream.url },
      local: { type: 'local', directory, allowPrivateNetworks: true },
    },
    search: { chain: ['up'] },
    content: { chain: ['local'], timeBudgetMs: 5000 },
    cache: { enabled: cache },
  });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
    await site.close();
  });
  return { gateway, site };
}

const search = async (gateway: Awaited<ReturnType<typeof setup>>['gateway'], text: unknown) => {
  const response = await gateway.post('/v1/web-search', { query: 'widget install', contents: { text } });
  const body = (await response.json()) as any;
  return { response, body, results: body.data?.webPages?.value as any[] };
};

test('format "markdown": a page fetched for the request comes as markdown, with headings, lists, tables and code fences', async (t) => {
  const { gateway, site } = await setup(t, false);
  const { response, results } = await search(gateway, { format: 'markdown' });
  t.is(response.status, 200);
  const markdown: string = results[0].text;
  // A relative link comes absolute, resolved against the page's own address.
  t.true(markdown.includes(`before adding it to [a scheduler](${site.url}/docs/scheduler), so that`), markdown);
  t.regex(markdown, /^## Requirements$/m);
  t.regex(markdown, /^[-*] +A recent operating system with a terminal$/m);
  t.regex(markdown, /^\| *Flag *\| *Meaning *\|$/m);
  t.regex(markdown, /^\| *-+ *\| *-+ *\|$/m);
  t.regex(markdown, /^\| *\\?--quiet *\| *prints nothing but errors *\|$/m);
  t.regex(markdown, /^```[a-z]*\nwidget init \.\/notes\nwidget build --quiet\n```$/m);
  t.false(/Copyright|Privacy|Blog/.test(markdown), 'boilerplate stays out of markdown as of text');

  // The same request without a format: plain text, the same words.
  const plain: string = (await search(gateway, true)).results[0].text;
  t.false(/^#|^\||```/m.test(plain), plain);
  t.true(plain.includes('turns a folder of notes into a searchable catalogue'));
  t.true(plain.includes('widget build --quiet'));
});

test('format "markdown": max_characters cuts the markdown in code points; a page the index holds comes as it is stored', async (t) => {
  const { gateway, site } = await setup(t, false);
  const full = (await search(gateway, { format: 'markdown' })).results;
  t.is(full[2].text, STORED_MARKDOWN, 'the index\'s own markdown');
  t.is(full[1].text, STORED_TEXT, 'a page the index holds as text alone');
  t.is((await search(gateway, true)).results[2].text, STORED_MARKDOWN_TEXT, 'plain text when no format is asked for');
  const { results } = await search(gateway, { format: 'markdown', max_characters: 40 });
  t.is(results[0].text, [...full[0].text].slice(0, 40).join(''));
  t.is(results[1].text, STORED_TEXT.slice(0, 40));
  t.is(site.requests.filter((request) => request.url.startsWith('/stored')).length, 0, 'stored pages are not fetched again for their markup');
});

test('the response cache keeps plain text and markdown apart', async (t) => {
  const { gateway } = await setup(t, true);
  const plain = await search(gateway, true);
  const markdown = await search(gateway, { format: 'markdown' });
  const again = await search(gateway, { format: 'markdown' });
  t.is(plain.response.headers.get('x-cache'), 'MISS');
  t.is(markdown.response.headers.get('x-cache'), 'MISS');
  t.is(again.response.headers.get('x-cache'), 'HIT');
  t.regex(markdown.results[0].text, /^## Options$/m);
  t.deepEqual(again.results, markdown.results);
  t.notRegex(plain.results[0].text, /^## /m);
});

test('a format other than text or markdown is a 400 in the API\'s error body', async (t) => {
  const { gateway } = await setup(t, false);
  const { response, body } = await search(gateway, { format: 'html' });
  t.is(response.status, 400);
  t.is(body.code, '400');
  t.regex(body.message, /contents\.text\.format must be equal to one of the allowed values/);
  t.notRegex(JSON.stringify(body), /at [\w.]+ \(/, 'no stack trace');
});
