import { fileURLToPath } from 'node:url';
import test from 'ava';
import { extractDocument } from '../../../src/local/extract/index.js';
import { aggregateScore, compareTexts, loadBenchmarkPages, type BenchmarkPage } from '../../../bench/extraction-score.js';

/** The shared data set, next to the repository (never copied into it): ../shared/data/article-extraction. */
const DATA_DIR = fileURLToPath(new URL('../../../../../shared/data/article-extraction', import.meta.url));
/** Measured 0.986 on the 54 pages (docs/benchmarks.md, "Main-text extraction"); the floor sits just below. */
const F1_FLOOR = 0.975;

test('the shingle scorer follows the benchmark: normalized counts, means of P and R, F1 of the means', (t) => {
  t.deepEqual(compareTexts('a b c d e', 'a b c d e'), { tp: 1, fp: 0, fn: 0 });
  const partial = compareTexts('one two three four five six', 'one two three four seven');
  // truth shingles: 1234 2345 3456; predicted: 1234 2347 → tp 1, fp 1, fn 2, each over 4.
  t.deepEqual(partial, { tp: 0.25, fp: 0.25, fn: 0.5 });
  t.deepEqual(compareTexts('short text', 'short text'), { tp: 1, fp: 0, fn: 0 });
  t.deepEqual(compareTexts('', ''), { tp: 0, fp: 0, fn: 0 });
  const score = aggregateScore([partial, { tp: 1, fp: 0, fn: 0 }, { tp: 0, fp: 0, fn: 0 }]);
  t.is(score.precision, (0.5 + 1) / 2);
  t.is(score.recall, (1 / 3 + 1) / 2);
  t.is(score.f1, (2 * score.precision * score.recall) / (score.precision + score.recall));
});

test(`main-text F1 on the article-extraction pages stays at or above ${F1_FLOOR}`, async (t) => {
  let pages: BenchmarkPage[];
  try {
    pages = loadBenchmarkPages(DATA_DIR);
  } catch (error) {
    t.fail(`cannot run the extraction quality test: ${(error as Error).message}`);
    return;
  }
  t.true(pages.length >= 50, `expected the 54 benchmark pages in ${DATA_DIR}, found ${pages.length}`);
  const counts = [];
  for (const page of pages) {
    const extracted = await extractDocument(page.html, { url: page.url, contentType: 'text/html' });
    counts.push(compareTexts(page.expectedText, extracted.text));
  }
  const { f1, precision, recall } = aggregateScore(counts);
  t.log(`F1 ${f1.toFixed(3)}  precision ${precision.toFixed(3)}  recall ${recall.toFixed(3)}  (${pages.length} pages)`);
  t.true(f1 >= F1_FLOOR, `F1 ${f1.toFixed(4)} fell below ${F1_FLOOR}`);
});
