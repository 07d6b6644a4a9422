import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { contentHash, readJsonl } from '../../../src/local/ingest/index.js';
import type { IngestIssue } from '../../../src/local/ingest/index.js';
import type { IndexedPage } from '../../../src/local/types.js';

const ARTICLE_HTML = `<!doctype html><html lang="en"><head><title>Tide tables</title>
<link rel="canonical" href="https://www.example.org/tides">
<meta property="article:published_time" content="2024-03-01T08:00:00Z"></head>
<body><nav>Home | Tides | Contact</nav><article><h1>Tide tables</h1>
<p>Tide tables list the times and heights of high and low water at a harbour for every day of the year.</p>
<p>They are computed from harmonic constants measured at the harbour over many years of observation.</p>
<p>Sailors read them together with the weather forecast before they leave the harbour.</p></article></body></html>`;

const LINES = [
  JSON.stringify({ url: 'https://www.example.org/a', title: 'Given title', text: 'Plain text of page A.\n\nSecond paragraph.', datePublished: '2023-05-06' }),
  '{"url": "https://example.org/broken", "text": ',
  JSON.stringify({ url: 'https://example.org/tides-page?utm_source=feed', html: ARTICLE_HTML }),
  JSON.stringify({ title: 'no url', text: 'orphan' }),
  '',
  JSON.stringify({ url: 'https://example.org/bad-date', text: 'has a bad date', datePublished: 'the day before yesterday' }),
  JSON.stringify({ url: 'ftp://example.org/file', text: 'not http' }),
  JSON.stringify({ url: 'https://example.org/empty', text: '   ' }),
  '[1, 2, 3]',
  JSON.stringify({ url: 'https://example.org/html-and-title', title: 'Curated title', html: ARTICLE_HTML, fetchedAt: '2024-04-01T00:00:00Z' }),
];

async function readAll(path: string) {
  const issues: IngestIssue[] = [];
  const pages: IndexedPage[] = [];
  for await (const page of readJsonl(path, { onIssue: (issue) => issues.push(issue) })) pages.push(page);
  return { pages, issues };
}

function writeTemporary(name: string, content: string | Buffer): string {
  const path = join(mkdtempSync(join(tmpdir(), 'searchgate-jsonl-')), name);
  writeFileSync(path, content);
  return path;
}

test('reads text and html lines into IndexedPages; bad lines are reported by number and skipped', async (t) => {
  const { pages, issues } = await readAll(writeTemporary('pages.jsonl', LINES.join('\n')));
  t.deepEqual(
    issues.map((issue) => issue.location),
    ['line 2', 'line 4', 'line 6', 'line 7', 'line 8', 'line 9'],
  );
  t.regex(issues[0]!.message, /not valid JSON/);
  t.regex(issues[1]!.message, /"url" is missing/);
  t.regex(issues[2]!.message, /"datePublished" is not a date/);
  t.regex(issues[3]!.message, /not an http\(s\) URL/);
  t.regex(issues[4]!.message, /neither "text" nor "html"/);
  t.is(pages.length, 3);

  const [plain, extracted, curated] = pages as [IndexedPage, IndexedPage, IndexedPage];
  t.like(plain, {
    url: 'https://www.example.org/a',
    canonicalUrl: 'https://www.example.org/a',
    title: 'Given title',
    text: 'Plain text of page A.\n\nSecond paragraph.',
    datePublished: '2023-05-06T00:00:00.000Z',
    domain: 'example.org',
    contentHash: contentHash('Plain text of page A.\n\nSecond paragraph.'),
  });
  t.false(Number.isNaN(Date.parse(plain.fetchedAt)));

  t.is(extracted.url, 'https://example.org/tides-page?utm_source=feed');
  t.is(extracted.canonicalUrl, 'https://www.example.org/tides');
  t.is(extracted.title, 'Tide tables');
  t.is(extracted.datePublished, '2024-03-01T08:00:00.000Z');
  t.is(extracted.language, 'en');
  t.regex(extracted.text, /harmonic constants/);
  t.notRegex(extracted.text, /Contact/);
  // The index keeps a page's markdown beside its text when it comes from HTML; a text line has none.
  t.regex(extracted.markdown ?? '', /^They are computed from harmonic constants/m);
  t.notRegex(extracted.markdown ?? '', /Contact/);
  t.false('markdown' in plain);

  t.is(curated.title, 'Curated title');
  t.is(curated.fetchedAt, '2024-04-01T00:00:00.000Z');
});

test('reads gzipped JSONL', async (t) => {
  const { pages, issues } = await readAll(writeTemporary('pages.jsonl.gz', gzipSync(`${LINES[0]}\n${LINES[2]}\n`)));
  t.deepEqual(issues, []);
  t.deepEqual(
    pages.map((page) => page.url),
    ['https://www.example.org/a', 'https://example.org/tides-page?utm_source=feed'],
  );
});

test('content hashes ignore case, Unicode compatibility forms and whitespace, nothing else', (t) => {
  t.is(contentHash('Caf\u00e9  au\nlait'), contentHash('CAFE\u0301 au lait'.normalize('NFC')));
  t.is(contentHash('\uff21 b'), contentHash('a B'));
  t.not(contentHash('a b'), contentHash('a b c'));
});

test('a line\'s own markdown (an exported page) is kept as given; a markdown that is not a string is reported', async (t) => {
  const lines = [
    JSON.stringify({ url: 'https://example.org/exported', text: 'Tide tables\nHigh water at noon.', markdown: '## Tide tables\n\n- High water at noon.' }),
    JSON.stringify({ url: 'https://example.org/odd', text: 'odd markdown', markdown: 42 }),
  ];
  const { pages, issues } = await readAll(writeTemporary('exported.jsonl', lines.join('\n')));
  t.is(pages.length, 1);
  t.is(pages[0]!.markdown, '## Tide tables\n\n- High water at noon.');
  t.is(pages[0]!.text, 'Tide tables\nHigh water at noon.');
  t.deepEqual(issues.map((issue) => issue.message), ['"markdown" is not a string']);
});
