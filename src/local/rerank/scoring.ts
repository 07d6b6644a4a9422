/**
 * From scoring jobs (a query and its documents) to raw scores, wherever the model runs: the engine
 * runs the model work on its worker threads, `InferenceSession.score` in the calling thread. Both
 * pass through here, so the cache, the deduplication and the way a document's windows become one
 * score are the same for the service, the command line and the benchmarks.
 *
 * This module loads neither ONNX Runtime nor the tokenizer: the engine uses it in the main thread.
 */
import type { DocumentEmbedding, DocumentEmbeddingCache } from './cache.js';
import type { RerankModelSpec } from './model.js';

export interface ScoringJob {
  query: string;
  documents: string[];
}

export interface JobScores {
  /** Per document: the best window's logit (cross-encoder) or cosine (bi-encoder). */
  semantic: number[];
  /** Per document: BM25 against the query with statistics from this job's documents. */
  lexical: number[];
  /** Windows the documents were cut into, in all (those whose embeddings came from the cache included). */
  windows: number;
}

/** Model work, in one thread or split across several (each part is a task of its own). */
export interface EmbeddingTask {
  /** Bi-encoder: texts embedded as queries, one vector each. */
  queries: string[];
  /** Bi-encoder: documents embedded window by window. */
  documents: string[];
  /** Cross-encoder: each document scored against its job's query (best window). */
  pairs: ScoringJob[];
  /** In-request BM25 of each job's documents against its query. */
  lexical: ScoringJob[];
  /**
   * Windows embedded per document, from its start; absent: all of them. The index embeds a page's
   * opening only (src/local/index/embedder.ts); reranking reads every window.
   */
  maxWindows?: number;
}

export interface EmbeddingResult {
  queries: Float32Array[];
  /** Each document's windows, each packed in a buffer of its own (transferable, cacheable). */
  documents: DocumentEmbedding[];
  /** Per pair job: each document's best logit and its number of windows. */
  pairs: { semantic: number[]; windows: number[] }[];
  lexical: number[][];
}

export interface ScoringContext {
  spec: RerankModelSpec;
  /** Bi-encoders: document embeddings kept across calls; null for none. */
  cache: DocumentEmbeddingCache | null;
  run(task: EmbeddingTask): Promise<EmbeddingResult>;
}

export interface ScoringOutcome {
  scores: JobScores[];
  /** Windows whose embedding came from the cache rather than the model. */
  cachedWindows: number;
}

export function emptyTask(): EmbeddingTask {
  return { queries: [], documents: [], pairs: [], lexical: [] };
}

/**
 * Raw scores of each job. A bi-encoder embeds each query once and each distinct document once, and
 * a document the cache holds not at all (it is neither tokenized nor run); a cross-encoder scores
 * every (query, document window) pair. BM25 runs with the model work.
 */
export async function scoreJobs(jobs: readonly ScoringJob[], context: ScoringContext): Promise<ScoringOutcome> {
  const { spec } = context;
  const lexical = jobs.map((job) => ({ query: job.query, documents: job.documents }));
  if (spec.family === 'cross-encoder') {
    const result = await context.run({ ...emptyTask(), pairs: lexical, lexical });
    return {
      scores: jobs.map((_, i) => ({
        semantic: result.pairs[i]!.semantic,
        lexical: result.lexical[i]!,
        windows: result.pairs[i]!.windows.reduce((sum, count) => sum + count, 0),
      })),
      cachedWindows: 0,
    };
  }

  const lookup = lookUpDocuments(
    jobs.flatMap((job) => job.documents),
    context.cache,
  );
  const result = await context.run({ queries: jobs.map((job) => job.query), documents: lookup.unseen, pairs: [], lexical });
  const embeddings = lookup.complete(result.documents);

  let offset = 0;
  const scores = jobs.map((job, jobIndex): JobScores => {
    const query = result.queries[jobIndex]!;
    let windows = 0;
    const semantic = job.documents.map((_, i) => {
      const embedding = embeddings[offset + i]!;
      windows += embedding.windows;
      return bestCosine(query, embedding);
    });
    offset += job.documents.length;
    return { semantic, lexical: result.lexical[jobIndex]!, windows };
  });
  return { scores, cachedWindows: lookup.cachedWindows };
}

/**
 * Which of `texts` the cache holds, and the distinct rest, to embed. `complete` takes the rest's
 * embeddings (in the order of `unseen`), stores them in the cache and returns one per text.
 */
export function lookUpDocuments(
  texts: readonly string[],
  cache: DocumentEmbeddingCache | null,
): { unseen: string[]; cachedWindows: number; complete(embedded: readonly DocumentEmbedding[]): DocumentEmbedding[] } {
  const found = new Array<DocumentEmbedding | undefined>(texts.length);
  const slots = new Array<number>(texts.length).fill(-1);
  const unseen: string[] = [];
  const unseenKeys: string[] = [];
  const slotOfKey = new Map<string, number>();
  let cachedWindows = 0;
  texts.forEach((text, i) => {
    const key = cache ? cache.key(text) : text;
    const pending = slotOfKey.get(key);
    if (pending !== undefined) {
      slots[i] = pending;
      return;
    }
    const cached = cache?.get(key);
    if (cached) {
      found[i] = cached;
      cachedWindows += cached.windows;
      return;
    }
    slotOfKey.set(key, unseen.length);
    slots[i] = unseen.length;
    unseen.push(text);
    unseenKeys.push(key);
  });
  return {
    unseen,
    cachedWindows,
    complete(embedded) {
      if (embedded.length !== unseen.length) throw new Error(`expected ${unseen.length} document embeddings, got ${embedded.length}`);
      if (cache) embedded.forEach((embedding, slot) => cache.set(unseenKeys[slot]!, embedding));
      return texts.map((_, i) => found[i] ?? embedded[slots[i]!]!);
    },
  };
}

/** The best cosine between the query and any of the document's windows (MaxP). */
export function bestCosine(query: Float32Array, document: DocumentEmbedding): number {
  const dimension = query.length;
  let queryNorm = 0;
  for (let d = 0; d < dimension; d++) queryNorm += query[d]! * query[d]!;
  let best = Number.NEGATIVE_INFINITY;
  for (let window = 0; window < document.windows; window++) {
    const base = window * dimension;
    let dot = 0;
    let norm = 0;
    for (let d = 0; d < dimension; d++) {
      const value = document.vectors[base + d]!;
      dot += query[d]! * value;
      norm += value * value;
    }
    const cosine = dot / (Math.sqrt(queryNorm * norm) || 1);
    if (cosine > best) best = cosine;
  }
  return best;
}
