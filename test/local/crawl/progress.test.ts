import { Writable } from 'node:stream';
import test from 'ava';
import { createProgress } from '../../../src/local/crawl/index.js';
import type { CrawlCounters } from '../../../src/local/crawl/index.js';

function capture(): { stream: Writable; text(): string } {
  let written = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      written += chunk;
      done();
    },
  });
  return { stream, text: () => written };
}

const counters = (overrides: Partial<CrawlCounters> = {}): CrawlCounters => ({
  fetched: 3, stored: 2, duplicates: 1, challenges: 0, skipped: 0, blocked: 0, errors: 1, queued: 7, ...overrides,
});

test('not on a terminal: one plain line per page, and a summary', (t) => {
  const output = capture();
  const progress = createProgress(output.stream, { tty: false });
  progress.page('https://example.org/a', 'stored', undefined, counters());
  progress.page('https://example.org/b', 'error', 'HTTP 500', counters());
  progress.notice('https://example.org: no robots.txt (HTTP 404)');
  progress.finish(counters(), false);
  const lines = output.text().split('\n');
  t.is(lines[0], 'stored https://example.org/a');
  t.is(lines[1], 'error https://example.org/b (HTTP 500)');
  t.is(lines[2], 'https://example.org: no robots.txt (HTTP 404)');
  t.regex(lines[3]!, /^crawl: 3 pages, [\d.]+ pages\/s, 2 stored, 1 duplicates, 1 errors, 7 queued \(interrupted: run again to continue\)$/);
  t.notRegex(output.text(), /\x1b/);
});

test('on a terminal: a status line redrawn in place, errors scrolled above it', (t) => {
  const output = capture();
  const progress = createProgress(output.stream, { tty: true });
  progress.page('https://example.org/a', 'stored', undefined, counters({ errors: 0 }));
  progress.page('https://example.org/b', 'error', 'timeout', counters());
  progress.finish(counters(), true);
  const text = output.text();
  t.true(text.startsWith('crawl: 3 pages'));
  t.regex(text, /\r\x1b\[Kerror https:\/\/example\.org\/b \(timeout\)\ncrawl: 3 pages/);
  t.notRegex(text, /stored https/, 'pages that went well only move the counters');
  t.true(text.endsWith('7 queued\n'));
});
