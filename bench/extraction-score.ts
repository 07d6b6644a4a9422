/**
 * The scoring of Zyte's article-extraction benchmark (scrapinghub/article-extraction-benchmark,
 * evaluate.py), shared by bench/extraction.ts and the F1-floor test so both report the same figure.
 * See ../shared/data/README.md for the rules this follows. extraction-dev's score.py scores the same
 * way but for its tokens (cjkAwareTokens); bench/extraction-dev.ts uses it with those.
 */
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';

/** The benchmark tokenizes with Python's Unicode `\w+`: letters, numbers and the underscore. */
const WORD_TOKEN = /[\p{L}\p{N}_]+/gu;
const SHINGLE_SIZE = 4;

export type Tokenizer = (text: string) => string[];

/** Zyte's tokens: `\w+` runs. */
export const wordTokens: Tokenizer = (text) => text.match(WORD_TOKEN) ?? [];

/**
 * Han, Kana and Hangul as extraction-dev's score.py lists them. `\w+` would make a run of CJK
 * characters one token, so a Chinese paragraph would be a handful of huge tokens and any one
 * differing character would cost the whole run.
 */
const CJK = '\\u1100-\\u11ff\\u3040-\\u30ff\\u3130-\\u318f\\u31f0-\\u31ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff\\uff66-\\uff9f\\u{20000}-\\u{3134f}';
const CJK_AWARE_TOKEN = new RegExp(`[${CJK}]|(?:(?![${CJK}])[\\p{L}\\p{N}_])+`, 'gu');

/** extraction-dev's tokens (score.py): each CJK character on its own, `\w+` runs of everything else; equal to wordTokens on text without CJK. */
export const cjkAwareTokens: Tokenizer = (text) => text.match(CJK_AWARE_TOKEN) ?? [];

/** Per-page counts, normalized by their sum so long pages weigh no more than short ones. */
export interface ShingleCounts {
  tp: number;
  fp: number;
  fn: number;
}

export interface ExtractionScore {
  f1: number;
  precision: number;
  recall: number;
}

function shingleMultiset(text: string, tokenize: Tokenizer, shingleSize: number): Map<string, number> {
  const tokens = tokenize(text);
  const counts = new Map<string, number>();
  if (tokens.length === 0) return counts;
  // A text shorter than one shingle is a single shingle of all its tokens, as in the benchmark.
  const shingleCount = Math.max(1, tokens.length - shingleSize + 1);
  for (let start = 0; start < shingleCount; start += 1) {
    // U+0001 cannot occur inside a token, so joined shingles never collide.
    const shingle = tokens.slice(start, start + shingleSize).join('\u0001');
    counts.set(shingle, (counts.get(shingle) ?? 0) + 1);
  }
  return counts;
}

/**
 * Both benchmarks compare the same way and differ only in their tokens (Zyte's by default). A
 * shingle size of 1 compares bags of words, as titles are compared.
 */
export function compareTexts(truth: string, predicted: string, tokenize: Tokenizer = wordTokens, shingleSize = SHINGLE_SIZE): ShingleCounts {
  const trueShingles = shingleMultiset(truth, tokenize, shingleSize);
  const predictedShingles = shingleMultiset(predicted, tokenize, shingleSize);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [shingle, predictedCount] of predictedShingles) {
    const trueCount = trueShingles.get(shingle) ?? 0;
    tp += Math.min(trueCount, predictedCount);
    fp += Math.max(0, predictedCount - trueCount);
  }
  for (const [shingle, trueCount] of trueShingles) {
    fn += Math.max(0, trueCount - (predictedShingles.get(shingle) ?? 0));
  }
  const total = tp + fp + fn;
  return total > 0 ? { tp: tp / total, fp: fp / total, fn: fn / total } : { tp, fp, fn };
}

export function pagePrecision({ tp, fp, fn }: ShingleCounts): number {
  if (fp === 0 && fn === 0) return 1;
  return tp / (tp + fp);
}

export function pageRecall({ tp, fp, fn }: ShingleCounts): number {
  if (fp === 0 && fn === 0) return 1;
  return tp / (tp + fn);
}

function mean(values: number[]): number {
  return values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
}

/** Mean precision and recall over pages (pages with nothing to measure left out), F1 from the means. */
export function aggregateScore(pages: ShingleCounts[]): ExtractionScore {
  const precision = mean(pages.filter((page) => page.tp + page.fp > 0).map(pagePrecision));
  const recall = mean(pages.filter((page) => page.tp + page.fn > 0).map(pageRecall));
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { f1, precision, recall };
}

export interface BenchmarkPage {
  id: string;
  url: string;
  html: Uint8Array;
  expectedText: string;
}

/** Where the shared data lives relative to the repository root (never copied into the repo). */
export const DEFAULT_ARTICLE_EXTRACTION_DIR = '../shared/data/article-extraction';

/** Loads the benchmark pages; throws with a message naming the folder when it is absent. */
export function loadBenchmarkPages(directory: string): BenchmarkPage[] {
  const groundTruthPath = join(directory, 'ground-truth.json');
  if (!existsSync(groundTruthPath)) {
    throw new Error(
      `article-extraction data not found: ${groundTruthPath} is missing (expected the shared data set at ${directory}; see ../shared/data/README.md)`,
    );
  }
  const groundTruth = JSON.parse(readFileSync(groundTruthPath, 'utf8')) as Record<string, { articleBody?: string; url: string }>;
  const available = new Set(readdirSync(join(directory, 'html')));
  return Object.entries(groundTruth)
    .filter(([id]) => available.has(`${id}.html.gz`))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([id, entry]) => ({
      id,
      url: entry.url,
      html: new Uint8Array(gunzipSync(readFileSync(join(directory, 'html', `${id}.html.gz`)))),
      expectedText: entry.articleBody ?? '',
    }));
}
