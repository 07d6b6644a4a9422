/**
 * Process-wide parts of the embedded default: one open LocalIndex per directory, shared by the
 * local search and content providers, and one extraction worker pool. Both are made on first use,
 * so a gateway whose chains never touch them never pays for them; idle pool workers do not keep
 * the process alive.
 */
import { resolve } from 'node:path';
import { ExtractorPool } from './extract/index.js';
import { openLocalIndex } from './index/index.js';
import type { LocalIndex } from './types.js';

const openIndexes = new Map<string, Promise<LocalIndex>>();

export function sharedIndex(directory: string): Promise<LocalIndex> {
  const key = resolve(directory);
  let index = openIndexes.get(key);
  if (!index) {
    index = openLocalIndex(key);
    // A failed open is not cached: the next request tries again (the disk may have been fixed).
    index.catch(() => openIndexes.delete(key));
    openIndexes.set(key, index);
  }
  return index;
}

let extractor: ExtractorPool | undefined;

export function sharedExtractor(): ExtractorPool {
  extractor ??= new ExtractorPool();
  return extractor;
}

/** For a process that is about to exit: close the indexes cleanly and stop the workers. */
export async function closeSharedLocalParts(): Promise<void> {
  const indexes = [...openIndexes.values()];
  openIndexes.clear();
  const pool = extractor;
  extractor = undefined;
  await Promise.allSettled([...indexes.map(async (index) => (await index).close()), pool?.close()]);
}

export const DEFAULT_INDEX_DIRECTORY = 'data/index';
