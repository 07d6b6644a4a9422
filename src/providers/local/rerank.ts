/**
 * local-reranker: the embedded neural reranker (src/local/rerank), an ONNX model run in-process on
 * the CPU with calibrated scores. It is the default model when the config names no other.
 *
 * The model loads when the gateway starts. A configured model that is missing or broken stops the
 * start with a message naming the file; the implicit default (`optional`) only logs how to fetch it,
 * and rerank then answers 503 until the model is there and the service restarts.
 *
 * `model` may also name a Hugging Face repository (`hf:owner/name`, or `owner/name` when no such
 * local path exists): the first start downloads it into `cacheDirectory`, later starts reuse it.
 */
import { ApiError } from '../../api/errors.js';
import { leadingWords } from '../../gateway/text.js';
import type { Logger } from '../../server/logger.js';
import { QueueFullError, RERANKER_DEFAULTS, type NeuralReranker } from '../../local/rerank/engine.js';
import { defaultModelCacheDirectory, DEFAULT_REVISION, expandHome, resolveModelSource } from '../../local/rerank/hub.js';
import { ModelDirectoryError } from '../../local/rerank/model.js';
import { acquireReranker, DEFAULT_RERANK_MODEL_DIRECTORY } from '../../local/shared.js';
import { UpstreamError } from '../errors.js';
import type { RerankCall, RerankProvider, RerankScores } from '../types.js';

export interface LocalRerankerOptions {
  /** A prepared model directory (searchgate-model.json, model.onnx, tokenizer files), or a Hugging Face model id. */
  model: string;
  /** Where Hub models are downloaded; default `${SEARCHGATE_CACHE_DIR:-~/.cache/searchgate}/models`. */
  cacheDirectory?: string;
  /** Default: HF_ENDPOINT, else https://huggingface.co. */
  hubUrl?: string;
  /** Branch, tag or commit of a Hub model; default `main`. */
  revision?: string;
  /** The implicit default: a missing model disables rerank instead of stopping the start. */
  optional: boolean;
  /** ONNX Runtime threads over all workers; default: every core. */
  threads?: number;
  /** Worker threads, each with its own ONNX session; default: one per thread, at most 4. */
  workers?: number;
  maxBatchTokens: number;
  maxDispatchDocuments: number;
  maxQueuedDocuments: number;
  /** Bytes of document embeddings kept for reuse; default 64 MiB, 0 turns the cache off. */
  embeddingCacheBytes?: number;
  /**
   * Before 0.2: a bound in window vectors. Still accepted when `embeddingCacheBytes` is not set:
   * 0 turns the cache off, N keeps N × 1.5 KiB (a MiniLM window vector each).
   */
  embeddingCacheEntries?: number;
  maxDocuments: number;
  /** ONNX Runtime's CPU arena and memory patterns (NeuralRerankerOptions.memoryArena). */
  memoryArena?: boolean;
  /**
   * Each document is scored on its first this many characters (whole words), as hosted rerankers
   * read a document's first 4,096 tokens (Cohere's max_tokens_per_doc): the model's time grows with
   * a document's windows, and one 500 KB document kept a worker busy for minutes, past any deadline.
   */
  maxDocumentCharacters: number;
}

/** What one cached window vector of the default model takes (384 float32): the old entry bound in bytes. */
const LEGACY_ENTRY_BYTES = 384 * 4;

/** The byte bound of the embedding cache, from the options old and new. */
export function embeddingCacheBytes(options: Pick<LocalRerankerOptions, 'embeddingCacheBytes' | 'embeddingCacheEntries'>): number {
  if (options.embeddingCacheBytes !== undefined) return options.embeddingCacheBytes;
  if (options.embeddingCacheEntries !== undefined) return options.embeddingCacheEntries * LEGACY_ENTRY_BYTES;
  return RERANKER_DEFAULTS.embeddingCacheBytes;
}

/** About 4,096 tokens of English prose (4–5 characters a token): 21 windows of 256 tokens for MiniLM. */
export const DEFAULT_MAX_DOCUMENT_CHARACTERS = 20_000;

export const localRerankerOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { const: 'local-reranker' },
    model: { type: 'string', minLength: 1, default: DEFAULT_RERANK_MODEL_DIRECTORY },
    cacheDirectory: { type: 'string', minLength: 1 },
    hubUrl: { type: 'string', pattern: '^https?://' },
    revision: { type: 'string', minLength: 1, default: DEFAULT_REVISION },
    optional: { type: 'boolean', default: false },
    threads: { type: 'integer', minimum: 1, maximum: 64 },
    workers: { type: 'integer', minimum: 1, maximum: 64 },
    maxBatchTokens: { type: 'integer', minimum: 256, default: RERANKER_DEFAULTS.maxBatchTokens },
    maxDispatchDocuments: { type: 'integer', minimum: 1, default: RERANKER_DEFAULTS.maxDispatchDocuments },
    maxQueuedDocuments: { type: 'integer', minimum: 1, default: RERANKER_DEFAULTS.maxQueuedDocuments },
    // No default in the schema: an old config's embeddingCacheEntries applies when this is not set.
    embeddingCacheBytes: { type: 'integer', minimum: 0 },
    embeddingCacheEntries: { type: 'integer', minimum: 0 },
    maxDocuments: { type: 'integer', minimum: 1, default: 1000 },
    memoryArena: { type: 'boolean' },
    maxDocumentCharacters: { type: 'integer', minimum: 256, default: DEFAULT_MAX_DOCUMENT_CHARACTERS },
  },
} as const;

export function createLocalRerank(name: string, options: LocalRerankerOptions): RerankProvider {
  let lease: ReturnType<typeof acquireReranker> | undefined;
  let reranker: NeuralReranker | undefined;
  let unavailable: string | undefined;
  return {
    name,
    capabilities: { maxDocuments: options.maxDocuments },
    async start(logger: Logger) {
      try {
        const directory = await resolveModelSource(options.model, {
          cacheDirectory: options.cacheDirectory ? expandHome(options.cacheDirectory) : defaultModelCacheDirectory(),
          hubUrl: options.hubUrl,
          revision: options.revision ?? DEFAULT_REVISION,
          // The built-in default is a local folder shaped like `owner/name`; unfetched, it must say how
          // to fetch it rather than send the Hub looking for a repository of that name.
          bareRepoIds: !options.optional && options.model !== DEFAULT_RERANK_MODEL_DIRECTORY,
          onDownload: (download) =>
            logger.info('downloading reranker model from Hugging Face (once; later starts reuse it)', { provider: name, ...download }),
        });
        lease = acquireReranker(directory, {
          threads: options.threads,
          workers: options.workers,
          maxBatchTokens: options.maxBatchTokens,
          maxDispatchDocuments: options.maxDispatchDocuments,
          maxQueuedDocuments: options.maxQueuedDocuments,
          embeddingCacheBytes: embeddingCacheBytes(options),
          memoryArena: options.memoryArena,
        });
        reranker = await lease.reranker;
      } catch (error) {
        await lease?.release();
        lease = undefined;
        if (!(error instanceof ModelDirectoryError) || !options.optional) throw error;
        unavailable = error.message;
        logger.warn('the embedded reranker is not available, so rerank answers 503', { provider: name, reason: error.message });
        return;
      }
      if (!reranker.spec.calibration) {
        logger.warn('reranker model has no calibration: scores rank correctly but their bands mean nothing; run searchgate calibrate', {
          provider: name,
          model: reranker.directory,
        });
      }
      logger.info('reranker model loaded', {
        provider: name,
        model: reranker.spec.id,
        family: reranker.spec.family,
        file: reranker.spec.file,
        workers: reranker.options.workers,
        threadsPerWorker: reranker.options.threadsPerWorker,
      });
    },
    async close() {
      reranker = undefined;
      await lease?.release();
      lease = undefined;
    },
    telemetry() {
      if (!reranker) return null;
      return { provider: name, queuedDocuments: reranker.pendingDocuments, ...reranker.stats };
    },
    async rerank(call: RerankCall): Promise<RerankScores> {
      // Not installed is not an upstream hiccup: no retry or fallback will fix it, the operator must.
      if (!reranker) throw new ApiError(503, `the embedded reranker is not available: ${unavailable ?? 'the model is not loaded'}`);
      try {
        const documents = call.documents.map((document) => (document.length > options.maxDocumentCharacters ? leadingWords(document, options.maxDocumentCharacters) : document));
        return { scores: await reranker.score(call.query, documents, call.signal) };
      } catch (error) {
        if (call.signal.aborted) throw error;
        if (error instanceof QueueFullError) throw new UpstreamError(name, 'rate_limited', error.message, 503, 1000);
        throw new UpstreamError(name, 'unavailable', (error as Error).message);
      }
    },
  };
}
