import test from 'ava';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExtractorPool, extractHtml } from '../../../src/local/extract/index.js';
import { buildPdf } from './pdf-fixture.js';

const ARTICLE = `<html><head><title>Bridge reopens</title></head><body><nav><a href="/">Home</a><a href="/news">News</a></nav>
<article><h1>Bridge reopens</h1><p>${'The bridge reopened to traffic on Monday after two years of repairs to its deck and cables. '.repeat(5)}</p></article></body></html>`;

/**
 * 16 MB of blocks, three times the pool's default size cap: about 11 s in one thread of a 2-core VM,
 * and several seconds on a machine three times as fast. (A page nested 100,000 deep used to serve here,
 * at 17 s; since the parser's open-tag stack was patched it takes about 1 s.)
 */
const PATHOLOGICAL = `<html><body>${'<div class="c"><p>Some words in a paragraph, with commas, here.</p></div>'.repeat(220_000)}</body></html>`;

test('the pool returns what extractHtml returns, off the event loop', async (t) => {
  const pool = new ExtractorPool({ size: 2 });
  t.teardown(() => pool.close());
  const [fromHtml, fromBytes, fromPdf] = await Promise.all([
    pool.extractHtml(ARTICLE, 'https://city.example/bridge'),
    pool.extract(Buffer.from(ARTICLE), { url: 'https://city.example/bridge', contentType: 'text/html; charset=utf-8' }),
    pool.extract(buildPdf('Minutes', [['The council approved the budget.']]), { url: 'https://city.example/m.pdf', contentType: 'application/pdf' }),
  ]);
  t.deepEqual(fromHtml, extractHtml(ARTICLE, 'https://city.example/bridge'));
  t.deepEqual(fromBytes, fromHtml);
  t.is(fromPdf.text, 'The council approved the budget.');
});

test('a page over the time limit yields an empty text and its worker is replaced', async (t) => {
  // Generous enough for the ordinary page on a loaded machine; the pathological one needs many seconds.
  const pool = new ExtractorPool({ size: 1, timeLimitMs: 2000, maxHtmlBytes: PATHOLOGICAL.length });
  t.teardown(() => pool.close());
  const started = Date.now();
  const slow = await pool.extractHtml(PATHOLOGICAL, 'https://slow.example/');
  t.is(slow.text, '');
  t.is(pool.timeouts, 1);
  t.true(Date.now() - started < 8000, 'the limit cut the page short');
  const next = await pool.extractHtml(ARTICLE, 'https://city.example/bridge');
  t.regex(next.text, /bridge reopened to traffic/);
  t.is(pool.timeouts, 1);
});

test('HTML beyond the size cap is cut off before parsing', async (t) => {
  const pool = new ExtractorPool({ size: 1, maxHtmlBytes: 600 });
  t.teardown(() => pool.close());
  const capped = await pool.extract(Buffer.from(ARTICLE), { url: 'https://city.example/bridge', contentType: 'text/html' });
  t.true(capped.text.length > 0);
  t.true(capped.text.length < extractHtml(ARTICLE, 'https://city.example/bridge').text.length);
});

test('a closed pool refuses work', async (t) => {
  const pool = new ExtractorPool({ size: 1 });
  await pool.close();
  await t.throwsAsync(pool.extractHtml(ARTICLE, 'https://city.example/bridge'), { message: /closed/ });
});

test('a process is held while the pool owes a page, and let go once it is idle, without close()', async (t) => {
  // In a child: pages submitted in waves (so workers go idle and are given work again); the pool is
  // never closed. Every page must come back, then the process must end by itself with code 0 (13
  // would mean the event loop ran dry while a page was still owed).
  const poolModule = new URL('../../../src/local/extract/index.js', import.meta.url).href;
  const script = `
    import { ExtractorPool } from ${JSON.stringify(poolModule)};
    const pool = new ExtractorPool({ size: 2 });
    const html = ${JSON.stringify(ARTICLE)};
    let done = 0;
    for (let wave = 0; wave < 4; wave += 1) {
      const pages = await Promise.all(Array.from({ length: wave + 1 }, () => pool.extractHtml(html, 'https://city.example/bridge')));
      done += pages.filter((page) => page.text.includes('bridge reopened')).length;
      await new Promise((resolve) => setTimeout(resolve, 20 * wave));
    }
    process.stdout.write(String(done));
  `;
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-pool-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  const file = join(directory, 'owed.mjs');
  writeFileSync(file, script);
  const child = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
  t.is(child.stderr, '');
  t.is(child.stdout, '10');
  t.is(child.status, 0);
  t.is(child.signal, null, 'it ended by itself, not by the timeout');
});
