import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { runCli } from '../../helpers/cli.js';
import { buildPdf } from './pdf-fixture.js';

const ARTICLE = `<!doctype html><html lang="en"><head><title>Harbour festival returns | Coast News</title>
<meta property="og:site_name" content="Coast News"><meta property="article:published_time" content="2024-07-06T09:00:00Z"></head>
<body><nav><a href="/">Home</a> <a href="/sport">Sport</a></nav><article><h1>Harbour festival returns</h1>
<p>${'The harbour festival returns this weekend with boat races, music and food stalls along the quay. '.repeat(4)}</p>
<p>${'Organisers expect more than twenty thousand visitors over the two days of the event. '.repeat(3)}</p></article>
<footer>© Coast News. All rights reserved.</footer></body></html>`;

const run = (...args: string[]) => runCli(['extract', ...args]);

function tempFile(name: string, contents: Uint8Array | string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'searchgate-extract-')), name);
  writeFileSync(path, contents);
  return path;
}

test('extract prints the title, date, language and main text of a gzip\'d HTML file', async (t) => {
  const { code, stdout } = await run(tempFile('page.html.gz', gzipSync(ARTICLE)));
  t.is(code, 0);
  t.regex(stdout, /^title: Harbour festival returns\ndate: 2024-07-06T09:00:00.000Z\nlanguage: en\n/);
  t.regex(stdout, /The harbour festival returns this weekend/);
  t.notRegex(stdout, /All rights reserved|Sport/);
});

test('extract --json prints the ExtractedPage, and reads PDFs', async (t) => {
  const html = await run(tempFile('page.html', ARTICLE), '--json', '--url', 'https://coast.example/2024/07/06/festival');
  t.is(html.code, 0);
  const page = JSON.parse(html.stdout);
  t.like(page, { url: 'https://coast.example/2024/07/06/festival', title: 'Harbour festival returns', isChallenge: false, language: 'en' });
  const pdf = await run(tempFile('minutes.pdf', buildPdf('Council minutes', [['The council approved the harbour budget.']])));
  t.is(pdf.code, 0);
  t.regex(pdf.stdout, /title: Council minutes[\s\S]*The council approved the harbour budget\./);
});

test('extract prints author and page type, and --format markdown renders the main text as markdown', async (t) => {
  const docs = `<!doctype html><html lang="en"><head><title>Retries</title><meta name="author" content="Docs Team"></head><body><main><article>
<h1>Retries</h1><p>${'The client retries failed requests with a growing wait between attempts. '.repeat(3)}</p>
<h2>Options</h2><ul><li>retries: how many attempts</li><li>backoffMs: the first wait</li></ul>
<pre><code>client.get('/items', { retries: 0 })</code></pre><pre><code>client.get('/users', { retries: 5 })</code></pre></article></main></body></html>`;
  const text = await run(tempFile('docs.html', docs));
  t.is(text.code, 0);
  t.regex(text.stdout, /\nauthor: Docs Team\ntype: documentation\n/);
  t.notRegex(text.stdout, /^## Options$/m);
  const markdown = await run(tempFile('docs.html', docs), '--format', 'markdown');
  t.is(markdown.code, 0);
  t.regex(markdown.stdout, /^## Options$/m);
  t.regex(markdown.stdout, /^- {1,3}retries: how many attempts$/m);
  t.regex(markdown.stdout, /```\nclient\.get\('\/items', \{ retries: 0 \}\)\n```/);
  t.is((await run(tempFile('docs.html', docs), '--format', 'html')).code, 2);
});

test('extract exits 1 on a challenge page and 2 on a usage error', async (t) => {
  const challenge = await run(tempFile('cf.html', '<html><head><title>Just a moment...</title></head><body><h2 id="challenge-running">Checking if the site connection is secure</h2></body></html>'));
  t.is(challenge.code, 1);
  t.regex(challenge.stderr, /challenge page/);
  t.is((await run()).code, 2);
  t.is((await run('/nonexistent/page.html')).code, 2);
  t.is((await run('--url', 'ftp://coast.example/a', tempFile('page.html', ARTICLE))).code, 2);
});
