/** Pages, queries and throwaway directories for the local index tests. */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
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
