/** Pages, queries and throwaway directories for the local index tests. */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import type { QueryEmbedder } from '../../../src/local/index/embedder.js';
import { queryStems } from '../../../src/local/index/terms.js';
import type { PageEmbedder } from '../../../src/local/index/writer.js';
import type { IndexedPage, IndexQuery } from '../../../src/local/types.js';

export function page(url: string, fields: Partial<IndexedPage> = {}): IndexedPage {
  const text = fields.text ?? `Body of ${url}`;
  return {
    url,
    canonicalUrl: url,
    title: `Page ${url}`,
    text,
    datePublished: null,
    domain: new URL(url).hostname.replace(/^www\./, ''),
    language: 'en',
    fetchedAt: '2026-01-01T00:00:00.000Z',
    contentHash: createHash('sha256').update(text).digest('hex'),
    ...fields,
  };
}

export function query(text: string, fields: Partial<IndexQuery> = {}): IndexQuery {
  return { query: text, limit: 10, offset: 0, includeDomains: [], excludeDomains: [], window: null, ...fields };
}

/** A directory removed when the test ends, whatever its outcome. */
export async function temporaryDirectory(t: ExecutionContext): Promise<string> {
  const directory = await mkdtemp(join(os.tmpdir(), 'searchgate-index-test-'));
  t.teardown(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

/** Filler prose without the test's query words, for long bodies. */
export function filler(words: number): string {
  const vocabulary = ['river', 'stone', 'market', 'window', 'garden', 'letter', 'silver', 'harbor', 'engine', 'meadow'];
  return Array.from({ length: words }, (_, index) => vocabulary[(index * 7) % vocabulary.length]).join(' ');
}

/** The URL of one page written by writer-process.js. */
export function writerPageUrl(writerPrefix: string, batch: number, position: number): string {
  return `https://writer.example/${writerPrefix}/${batch}/${position}`;
}

export const BAG_OF_WORDS_DIMENSIONS = 64;

/**
 * A stand-in for the embedding model with its contract (unit vectors per window and of the title, a
 * model stamp), whose vectors are bags of hashed word stems, so that which page is nearest is known
 * in advance. Windows of `wordsPerWindow` words; each window's vector counts its stems in hashed
 * buckets.
 */
export function bagOfWordsEmbedder(model = 'bag-of-words-v1', wordsPerWindow = 50): PageEmbedder & QueryEmbedder & { pagesEmbedded: number } {
  const vector = (text: string) => {
    const values = new Float32Array(BAG_OF_WORDS_DIMENSIONS);
    for (const stem of queryStems(text)) {
      let hash = 0;
      for (const character of stem) hash = (hash * 31 + character.charCodeAt(0)) >>> 0;
      values[hash % BAG_OF_WORDS_DIMENSIONS]! += 1;
    }
    const norm = Math.hypot(...values) || 1;
    return values.map((value) => value / norm);
  };
  return {
    model,
    reads: [model],
    dimensions: BAG_OF_WORDS_DIMENSIONS,
    pagesEmbedded: 0,
    async embedPages(pages) {
      this.pagesEmbedded += pages.length;
      return pages.map(({ title, text }) => {
        const words = `${title}\n${text}`.split(/\s+/);
        const windows: Float32Array[] = [];
        for (let start = 0; start < words.length; start += wordsPerWindow) windows.push(vector(words.slice(start, start + wordsPerWindow).join(' ')));
        return { windows, title: title.trim() ? vector(title) : null };
      });
    },
    async embedQuery(text) {
      return vector(text);
    },
  };
}
