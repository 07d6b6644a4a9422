/**
 * Process-wide parts of the embedded default: one open LocalIndex per directory, shared by the
 * local search and content providers, and one extraction worker pool. Both are made on first use,
 * so a gateway whose chains never touch them never pays for them; idle pool workers do not keep
 * the process alive.
 */
import { resolve } from 'node:path';
import { ExtractorPool } from './extract/index.js';
import { openLocalIndex } from './index/index.js';
import { parseIndexLocation, type IndexLocation } from './index/location.js';
import { IndexMirror, type MirrorOptions, type MirrorStatus } from './index/mirror.js';
import { ObjectStore } from './index/object-store.js';
import { indexEmbedder, type IndexEmbedder } from './index/embedder.js';
import { NeuralReranker, type NeuralRerankerOptions } from './rerank/engine.js';
import type { LocalIndex } from './types.js';

/** What the replica needs of the gateway's logger. */
interface WarningLog {
  warn(message: string, fields?: Record<string, unknown>): void;
}
type ObjectStoreLocation = Extract<IndexLocation, { kind: 'object-store' }>;

const openIndexes = new Map<string, Promise<LocalIndex>>();
const mirrors = new Map<string, IndexMirror>();

/**
 * The process's open index at `location`: a directory, or an `s3://` URI, which is served from a
 * local mirror (mirror.ts) as a read-only replica. `mirror` says where and how; its defaults
 * otherwise.
 */
export function sharedIndex(location: string, mirror?: Partial<MirrorOptions>, logger?: WarningLog): Promise<LocalIndex> {
  const parsed = parseIndexLocation(location);
  const key = parsed.kind === 'directory' ? resolve(parsed.path) : parsed.uri;
  let index = openIndexes.get(key);
  if (!index) {
    index = parsed.kind === 'directory' ? openLocalIndex(key) : openReplica(parsed, { ...DEFAULT_MIRROR_OPTIONS, ...mirror }, logger);
    // A failed open is not cached: the next request tries again (the disk, or the store, may be back).
    index.catch(() => openIndexes.delete(key));
    openIndexes.set(key, index);
  }
  return index;
}

export const DEFAULT_MIRROR_POLL_INTERVAL_MS = 15_000;
export const DEFAULT_STORE_TIMEOUT_MS = 5_000;
/** Each store location gets its own folder below this one: bucket, then prefix. */
export const DEFAULT_MIRROR_DIRECTORY = 'data/index-mirror';
const DEFAULT_MIRROR_OPTIONS: MirrorOptions = {
  directory: DEFAULT_MIRROR_DIRECTORY,
  pollIntervalMs: DEFAULT_MIRROR_POLL_INTERVAL_MS,
  storeTimeoutMs: DEFAULT_STORE_TIMEOUT_MS,
};

async function openReplica(location: ObjectStoreLocation, options: MirrorOptions, logger?: WarningLog): Promise<LocalIndex> {
  const directory = resolve(options.directory, location.bucket, ...location.prefix.split('/').filter(Boolean));
  const store = new ObjectStore(location.bucket, location.prefix, options.storeTimeoutMs);
  let lastSaid = 0;
  const mirror = new IndexMirror(location.uri, store, { ...options, directory }, (message) => {
    // A store that stays down fails every poll; once a minute in the log is enough (the metric counts them all).
    if (Date.now() - lastSaid < 60_000) return;
    lastSaid = Date.now();
    logger?.warn('index mirror: the store did not answer; serving the last copy', { location: location.uri, error: message });
  });
  try {
    await mirror.start();
  } catch (error) {
    await mirror.close();
    throw error;
  }
  // A replica is only ever a reader: the store's writer (`searchgate index add`) commits and folds.
  try {
    const index = await openLocalIndex(directory, { readOnly: true });
    mirrors.set(location.uri, mirror);
    return index;
  } catch (error) {
    await mirror.close();
    throw error;
  }
}

/** How current this process's copy of the index at `location` (an s3:// URI) is; null before it has one. */
export function mirrorStatus(location: string): MirrorStatus | null {
  return mirrors.get(location)?.status() ?? null;
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
  const replicaMirrors = [...mirrors.values()];
  mirrors.clear();
  await Promise.allSettled([
    ...indexes.map(async (index) => (await index).close()),
    ...replicaMirrors.map((mirror) => mirror.close()),
    pool?.close(),
    ...rerankers.map(async ({ reranker }) => (await reranker).close()),
  ]);
}

export const DEFAULT_INDEX_DIRECTORY = 'data/index';
export const DEFAULT_RERANK_MODEL_DIRECTORY = 'models/all-minilm-l6-v2';
