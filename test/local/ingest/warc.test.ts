import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import iconv from 'iconv-lite';
import { WARCRecord, WARCSerializer } from 'warcio';
import { readWarc } from '../../../src/local/ingest/index.js';
import type { IngestIssue } from '../../../src/local/ingest/index.js';
import type { IndexedPage } from '../../../src/local/types.js';

function articleHtml(topic: string, head = ''): string {
  return `<!doctype html><html lang="en"><head><title>${topic}</title>${head}</head><body><nav>Menu</nav><article><h1>${topic}</h1>
${[1, 2, 3].map((n) => `<p>Paragraph ${n} on ${topic}, written out at enough length for the extractor to take it as the main text of the page.</p>`).join('\n')}
</article></body></html>`;
}

interface ResponseSpec {
  url: string;
  date?: string;
  status?: string;
  headers: Record<string, string>;
  body: Uint8Array | string;
  warcHeaders?: Record<string, string>;
  type?: 'response' | 'request' | 'metadata';
}

/** A WARC file as Common Crawl writes them: a warcinfo record, then one record per capture. */
async function buildWarc(records: ResponseSpec[], gzip: boolean): Promise<Buffer> {
  const warcVersion = 'WARC/1.1';
  const parts: Uint8Array[] = [
    await WARCSerializer.serialize(await WARCRecord.createWARCInfo({ filename: 'test.warc', warcVersion }, { software: 'searchgate tests' }), { gzip }),
  ];
  for (const spec of records) {
    const body = typeof spec.body === 'string' ? new TextEncoder().encode(spec.body) : spec.body;
    const record = WARCRecord.create(
      {
        url: spec.url,
        date: spec.date ?? '2024-02-03T04:05:06Z',
        type: spec.type ?? 'response',
        warcVersion,
        statusline: spec.type === 'request' ? 'GET / HTTP/1.1' : `HTTP/1.1 ${spec.status ?? '200 OK'}`,
        httpHeaders: spec.headers,
        warcHeaders: spec.warcHeaders,
      },
      (async function* () {
        yield body;
      })(),
    );
    parts.push(await WARCSerializer.serialize(record, { gzip }));
  }
  return Buffer.concat(parts);
}

const CAPTURES: ResponseSpec[] = [
  { url: 'https://www.example.com/first', headers: { 'Content-Type': 'text/html; charset=utf-8' }, body: articleHtml('First capture') },
  { url: 'https://www.example.com/', type: 'request', headers: { Host: 'www.example.com' }, body: '' },
  { url: 'https://www.example.com/gone', status: '404 Not Found', headers: { 'Content-Type': 'text/html' }, body: articleHtml('Gone') },
  { url: 'https://www.example.com/moved', status: '301 Moved Permanently', headers: { Location: '/first' }, body: '' },
  { url: 'https://www.example.com/logo.png', headers: { 'Content-Type': 'image/png' }, body: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]) },
  {
    // Common Crawl's identification wins over a wrong server label; the charset comes from the <meta>.
    url: 'https://blog.example.com/legacy',
    headers: { 'Content-Type': 'application/octet-stream' },
    warcHeaders: { 'WARC-Identified-Payload-Type': 'text/html' },
    body: iconv.encode(articleHtml('Caf\u00e9 na\u00efve \u2013 \u201cLegacy\u201d', '<meta charset="windows-1252">'), 'windows-1252'),
  },
  {
    // Stored with its content encoding, as some crawlers do: the payload is decoded on reading.
    url: 'https://www.example.com/compressed',
    headers: { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip' },
    body: gzipSync(articleHtml('Compressed capture', '<link rel="canonical" href="https://www.example.com/compressed-canonical">')),
  },
  {
    url: 'https://www.example.com/challenge',
    headers: { 'Content-Type': 'text/html' },
    body: `<!doctype html><html><head><title>Just a moment...</title></head><body><div id="challenge-running">Checking if the site connection is secure</div>
<noscript>Enable JavaScript and cookies to continue</noscript><script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script></body></html>`,
  },
];

async function readAll(path: string) {
  const issues: IngestIssue[] = [];
  const skipped: IngestIssue[] = [];
  const pages: IndexedPage[] = [];
  for await (const page of readWarc(path, { onIssue: (issue) => issues.push(issue), onSkip: (issue) => skipped.push(issue) })) pages.push(page);
  return { pages, issues, skipped };
}

for (const gzip of [false, true]) {
  test(`reads the HTML responses of a ${gzip ? 'gzipped ' : ''}WARC file, at their WARC-Target-URI and WARC-Date`, async (t) => {
    const path = join(mkdtempSync(join(tmpdir(), 'searchgate-warc-')), gzip ? 'crawl.warc.gz' : 'crawl.warc');
    writeFileSync(path, await buildWarc(CAPTURES, gzip));
    const { pages, issues, skipped } = await readAll(path);
    t.deepEqual(issues, []);
    t.deepEqual(
      pages.map((page) => page.url),
      ['https://www.example.com/first', 'https://blog.example.com/legacy', 'https://www.example.com/compressed'],
    );
    const [first, legacy, compressed] = pages as [IndexedPage, IndexedPage, IndexedPage];
    t.like(first, { title: 'First capture', domain: 'example.com', fetchedAt: '2024-02-03T04:05:06.000Z', canonicalUrl: 'https://www.example.com/first' });
    t.regex(first.text, /Paragraph 2 on First capture/);
    t.is(legacy.title, 'Caf\u00e9 na\u00efve \u2013 \u201cLegacy\u201d');
    t.is(legacy.domain, 'blog.example.com');
    t.is(compressed.canonicalUrl, 'https://www.example.com/compressed-canonical');
    t.deepEqual(
      skipped.map((issue) => issue.message),
      ['HTTP 404', 'HTTP 301', 'not HTML or PDF (image/png)', 'a challenge page'],
    );
  });
}
