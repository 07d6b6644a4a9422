/**
 * local: searchgate's own index of pages it has crawled or been given (src/local). Filters,
 * freshness and paging all run inside the index query, and text mode returns the stored main text.
 *
 * Ranking is hybrid (src/local/index/hybrid.ts): full-text and vector candidates, scored by one
 * calibrated model whose score each result carries. The pages' vectors were made when they were
 * written; a search embeds its query alone, with the model the index was built with (the embedded
 * reranker's, shared with it). Without that model, or on an index written without vectors, the
 * index ranks by BM25, and the log says once why and how to add them.
 */
import { freshnessWindow } from '../../api/freshness.js';
import { leadingWords } from '../../gateway/text.js';
import type { Logger } from '../../server/logger.js';
import { hybridSearch, retrievalWeights } from '../../local/index/hybrid.js';
import type { IndexEmbedder } from '../../local/index/embedder.js';
import { ModelDirectoryError } from '../../local/rerank/model.js';
import { ApiError } from '../../api/errors.js';
import { parseIndexLocation } from '../../local/index/location.js';
import { IndexUnavailableError, type MirrorOptions } from '../../local/index/mirror.js';
import {
  acquireIndexEmbedder,
  DEFAULT_INDEX_DIRECTORY,
  DEFAULT_MIRROR_DIRECTORY,
  DEFAULT_MIRROR_POLL_INTERVAL_MS,
  DEFAULT_RERANK_MODEL_DIRECTORY,
  DEFAULT_STORE_TIMEOUT_MS,
  mirrorStatus,
  sharedIndex,
} from '../../local/shared.js';
import type { LocalIndex } from '../../local/types.js';
import { searchCapabilities } from '../shared.js';
import type { SearchCall, SearchPage, SearchProvider } from '../types.js';

export interface LocalOptions {
  directory: string;
  /** When a content provider fetches a page for another upstream, also add it to the index. */
  addFetchedPages: boolean;
  fetchTimeoutMs: number;
  maxPageBytes: number;
  /** Let the fetcher reach private, loopback and link-local addresses (tests, intranets). */
  allowPrivateNetworks: boolean;
  /**
   * The embedding model of the index's vectors (the one `searchgate index add` used), or "none" for
   * full-text ranking alone. Default: the embedded reranker's model.
   */
  vectorModel: string;
  /** Candidates each leg (full text, vectors) brings to the calibrated scorer. */
  candidates: number;
  /** For a `directory` that is an s3:// URI: the replica's local copy of the index (src/local/index/mirror.ts). */
  mirror: MirrorOptions;
  /**
   * The query's first this many characters (whole words) are what the index looks for. The full-text
   * leg's memory grows with the query's terms, and the native allocator keeps it: a 330 KB query
   * took 240 MB that stayed (docs/benchmarks.md, "Memory under hostile traffic"). The query vector
   * reads only its first 128 tokens anyway.
   */
  maxQueryCharacters: number;
}

export const localOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { const: 'local' },
    directory: { type: 'string', minLength: 1, default: DEFAULT_INDEX_DIRECTORY },
    addFetchedPages: { type: 'boolean', default: false },
    fetchTimeoutMs: { type: 'integer', minimum: 1, default: 8000 },
    maxPageBytes: { type: 'integer', minimum: 1024, default: 10_485_760 },
    allowPrivateNetworks: { type: 'boolean', default: false },
    vectorModel: { type: 'string', minLength: 1, default: DEFAULT_RERANK_MODEL_DIRECTORY },
    candidates: { type: 'integer', minimum: 1, maximum: 1000, default: 40 },
    mirror: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        directory: { type: 'string', minLength: 1, default: DEFAULT_MIRROR_DIRECTORY },
        pollIntervalMs: { type: 'integer', minimum: 100, default: DEFAULT_MIRROR_POLL_INTERVAL_MS },
        storeTimeoutMs: { type: 'integer', minimum: 100, default: DEFAULT_STORE_TIMEOUT_MS },
      },
    },
    maxQueryCharacters: { type: 'integer', minimum: 16, default: 2048 },
  },
} as const;

/** A replica whose first sync has not succeeded yet (its copy is opened on the first search). */
const NOT_YET_MIRRORED = { version: null, versionCommittedAtMs: null, syncedAtMs: null, lastError: null, syncs: { ok: 0, failed: 0 }, bytesCopied: 0 };

/** The index of a local provider, opened once per process; an object-store index without a copy to serve is a 503. */
export async function providerIndex(options: LocalOptions, logger?: Logger | null): Promise<LocalIndex> {
  try {
    return await sharedIndex(options.directory, options.mirror, logger ?? undefined);
  } catch (error) {
    if (error instanceof IndexUnavailableError) throw new ApiError(503, error.message);
    throw error;
  }
}

/** The query model, loaded once per process and model directory; null when searches rank by BM25. */
interface QueryModel {
  embedder: IndexEmbedder | null;
  release(): Promise<void>;
}

export function createLocalSearch(name: string, options: LocalOptions): SearchProvider & { start(logger: Logger): Promise<void>; close(): Promise<void> } {
  let model: QueryModel = { embedder: null, release: async () => {} };
  const location = parseIndexLocation(options.directory);
  const replicaOf = location.kind === 'object-store' ? location.uri : null;
  let logger: Logger | null = null;
  const said = new Set<string>();
  const fullTextOnly = (reason: string) => {
    if (said.has(reason)) return;
    said.add(reason);
    logger?.warn(`local search ranks by full text alone: ${reason}`, { provider: name });
  };
  return {
    name,
    capabilities: searchCapabilities({ maxPageSize: 50, pagination: true, freshness: 'all', includeDomains: true, excludeDomains: true, text: true }),
    async start(startLogger) {
      logger = startLogger;
      model = await loadQueryModel(options.vectorModel, fullTextOnly);
      // A replica starts copying the index at once, in the background: a large first copy must not
      // hold the gateway's start, and /readyz says "degraded" until the copy has a version.
      if (replicaOf !== null) {
        void providerIndex(options, logger).catch((error: unknown) =>
          logger?.warn('local index replica: no copy to serve yet; searches answer 503 until the store is reachable', { location: replicaOf, error: (error as Error).message }),
        );
      }
    },
    async close() {
      await model.release();
    },
    indexReplica: replicaOf === null ? undefined : () => mirrorStatus(replicaOf) ?? { ...NOT_YET_MIRRORED, location: replicaOf, directory: options.mirror.directory },
    async search(call: SearchCall): Promise<SearchPage> {
      const index = await providerIndex(options, logger);
      const { hits, total } = await hybridSearch(
        index,
        {
          query: leadingWords(call.query, options.maxQueryCharacters),
          limit: call.count,
          offset: call.offset,
          includeDomains: call.includeDomains,
          excludeDomains: call.excludeDomains,
          window: freshnessWindow(call.freshness, call.nowMs),
        },
        // Without a model, start() has said why already.
        { embedder: model.embedder, weights: retrievalWeights(model.embedder?.retrieval), candidates: options.candidates, onFullTextOnly: model.embedder ? fullTextOnly : undefined },
      );
      return {
        results: hits.map(({ page, snippet, relevance }) => ({
          url: page.url,
          title: page.title,
          snippet,
          text: call.text ? page.text : null,
          datePublished: page.datePublished,
          dateLastCrawled: page.fetchedAt,
          relevance,
        })),
        totalEstimatedMatches: total,
      };
    },
  };
}

async function loadQueryModel(directory: string, fullTextOnly: (reason: string) => void): Promise<QueryModel> {
  if (directory === 'none') {
    fullTextOnly('providers.local.vectorModel is "none"');
    return { embedder: null, release: async () => {} };
  }
  const lease = acquireIndexEmbedder(directory);
  try {
    return { embedder: await lease.embedder, release: lease.release };
  } catch (error) {
    await lease.release();
    // A missing default model is said, not fatal: the index still answers by BM25.
    if (!(error instanceof ModelDirectoryError)) throw error;
    fullTextOnly(`${error.message} (fetch it with \`npm run fetch-model\`)`);
    return { embedder: null, release: async () => {} };
  }
}
