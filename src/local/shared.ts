/**
 * Process-wide parts of the embedded default: one open LocalIndex per directory, shared by the
 * local search and content providers, and one extraction worker pool. Both are made on first use,
 * so a gateway whose chains never touch them never pays for them; idle pool workers do not keep
 * the process alive.
 */
import { resolve } from 'node:path';
import { ExtractorPool } from './extract/index.js';
import { openLocalIndex } from './index/index.js';
import { indexEmbedder, type IndexEmbedder } from './index/embedder.js';
import { NeuralReranker, type NeuralRerankerOptions } from './rerank/engine.js';
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

const openRerankers = new Map<string, { reranker: Promise<NeuralReranker>; users: number }>();

/**
 * One loaded reranker per model directory, counted by users: gateways in one process (tests, a
 * config naming the model twice) share its worker and memory, and the last release stops it.
 */
export function acquireReranker(
  directory: string,
  options: NeuralRerankerOptions = {},
): { reranker: Promise<NeuralReranker>; release(): Promise<void> } {
  const key = resolve(directory);
  let entry = openRerankers.get(key);
  if (!entry) {
    entry = { reranker: NeuralReranker.open(key, options), users: 0 };
    openRerankers.set(key, entry);
    entry.reranker.catch(() => openRerankers.get(key) === entry && openRerankers.delete(key));
  }
  entry.users++;
  const acquired = entry;
  let released = false;
  return {
    reranker: acquired.reranker,
    async release() {
      if (released) return;
      released = true;
      if (--acquired.users > 0) return;
      if (openRerankers.get(key) === acquired) openRerankers.delete(key);
      await acquired.reranker.then((reranker) => reranker.close()).catch(() => undefined);
    },
  };
}

/**
 * The index's embedder over the shared reranker of `directory`: a gateway that searches the local
 * index and reranks holds the model once. Rejects with ModelDirectoryError when the model is missing
 * or makes no vectors (a cross-encoder).
 */
export function acquireIndexEmbedder(directory: string): { embedder: Promise<IndexEmbedder>; release(): Promise<void> } {
  const lease = acquireReranker(directory);
  return { embedder: lease.reranker.then((reranker) => indexEmbedder(reranker)), release: lease.release };
}

/** For a process that is about to exit: close the indexes cleanly and stop the workers. */
export async function closeSharedLocalParts(): Promise<void> {
  const indexes = [...openIndexes.values()];
  openIndexes.clear();
  const pool = extractor;
  extractor = undefined;
  const rerankers = [...openRerankers.values()];
  openRerankers.clear();
  await Promise.allSettled([
    ...indexes.map(async (index) => (await index).close()),
    pool?.close(),
    ...rerankers.map(async ({ reranker }) => (await reranker).close()),
  ]);
}

export const DEFAULT_INDEX_DIRECTORY = 'data/index';
export const DEFAULT_RERANK_MODEL_DIRECTORY = 'models/all-minilm-l6-v2';
