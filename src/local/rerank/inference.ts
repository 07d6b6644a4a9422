/**
 * Scoring inside one thread: tokenize, cut long documents into overlapping windows, run the ONNX
 * graph over length-sorted batches, pool, and keep each document's best window. Used by the worker
 * thread (worker.ts) and, for the raw-session baseline, by the speed benchmark.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { LRUCache } from 'lru-cache';
import * as ort from 'onnxruntime-node';
import { inRequestBm25 } from './lexical.js';
import { ModelDirectoryError, type RerankModelSpec } from './model.js';

export interface ScoringJob {
  query: string;
  documents: string[];
}

export interface JobScores {
  /** Per document: the best window's logit (cross-encoder) or cosine (bi-encoder). */
  semantic: number[];
  /** Per document: BM25 against the query with statistics from this job's documents. */
  lexical: number[];
  /** Windows the documents were cut into, in all. */
  windows: number;
}

export interface InferenceOptions {
  /** Threads ONNX Runtime uses for one batch. */
  threads: number;
  /** Padded tokens one batch may hold (sequences × longest sequence); bounds memory and latency. */
  maxBatchTokens: number;
  /**
   * Bi-encoders only: document-window embeddings kept for reuse (0: none). A window's embedding does
   * not depend on the query, and the same pages come back across searches and rerank calls, so a hit
   * saves a full model pass. Each entry holds one vector (384 floats for MiniLM, 1.5 KB).
   */
  embeddingCacheEntries?: number;
}

interface Sequence {
  ids: number[];
  typeIds: number[];
  /** Set for a bi-encoder's document window: its embedding can be cached. */
  cacheKey?: string;
}

type PostProcess = (tokens: string[], pair: string[] | null, addSpecialTokens: boolean) => { tokens: string[]; token_type_ids?: number[] };

export class InferenceSession {
  private readonly postProcess: PostProcess;
  private readonly unknownId: number;
  /** Special tokens one sequence of one text (single) or two (pair) carries. */
  private readonly singleOverhead: number;
  private readonly pairOverhead: number;
  private readonly feedsTypeIds: boolean;
  private readonly embeddingCache: LRUCache<string, Float32Array> | null;

  private constructor(
    readonly spec: RerankModelSpec,
    private readonly tokenizer: Tokenizer,
    private readonly session: ort.InferenceSession,
    private readonly options: InferenceOptions,
  ) {
    const processor = tokenizer.post_processor as unknown as PostProcess | null;
    this.postProcess = processor
      ? (tokens, pair, add) => processor(tokens, pair, add)
      : (tokens, pair) => ({ tokens: pair ? [...tokens, ...pair] : tokens });
    const unknown = (tokenizer as unknown as { config?: { unk_token?: string } }).config?.unk_token;
    this.unknownId = (unknown !== undefined ? tokenizer.token_to_id(unknown) : undefined) ?? 0;
    this.singleOverhead = this.postProcess([], null, true).tokens.length;
    this.pairOverhead = this.postProcess([], [], true).tokens.length;
    this.feedsTypeIds = session.inputNames.includes('token_type_ids');
    const entries = options.embeddingCacheEntries ?? 0;
    this.embeddingCache = spec.family === 'bi-encoder' && entries > 0 ? new LRUCache({ max: entries }) : null;
  }

  /** Windows answered from the embedding cache, and those the model had to run. */
  readonly cacheStats = { hits: 0, misses: 0 };

  static async open(directory: string, spec: RerankModelSpec, options: InferenceOptions): Promise<InferenceSession> {
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(
        JSON.parse(readFileSync(join(directory, 'tokenizer.json'), 'utf8')),
        JSON.parse(readFileSync(join(directory, 'tokenizer_config.json'), 'utf8')),
      );
    } catch (error) {
      throw new ModelDirectoryError(`reranker tokenizer in ${directory} cannot be loaded: ${(error as Error).message}`);
    }
    const modelPath = join(directory, spec.file);
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(modelPath, {
        intraOpNumThreads: options.threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
      });
    } catch (error) {
      throw new ModelDirectoryError(`reranker model ${modelPath} is not a loadable ONNX model: ${(error as Error).message}`);
    }
    for (const input of ['input_ids', 'attention_mask']) {
      if (!session.inputNames.includes(input)) {
        throw new ModelDirectoryError(`reranker model ${modelPath} has no input "${input}" (inputs: ${session.inputNames.join(', ')})`);
      }
    }
    if (!session.outputNames.includes(spec.output)) {
      throw new ModelDirectoryError(
        `reranker model ${modelPath} has no output "${spec.output}" (outputs: ${session.outputNames.join(', ')}); set "output" in searchgate-model.json`,
      );
    }
    const inference = new InferenceSession(spec, tokenizer, session, options);
    // One real pass, so a graph that loads but cannot run fails now rather than on a request.
    try {
      await inference.score([{ query: 'probe', documents: ['probe document'] }]);
    } catch (error) {
      throw new ModelDirectoryError(`reranker model ${modelPath} fails on a probe input: ${(error as Error).message}`);
    }
    return inference;
  }

  async close(): Promise<void> {
    await this.session.release();
  }

  private ids(tokens: readonly string[]): number[] {
    return tokens.map((token) => this.tokenizer.token_to_id(token) ?? this.unknownId);
  }

  private sequence(first: string[], second: string[] | null): Sequence {
    const processed = this.postProcess(first, second, true);
    return {
      ids: this.ids(processed.tokens),
      typeIds: processed.token_type_ids ?? new Array<number>(processed.tokens.length).fill(0),
    };
  }

  /** Overlapping windows of at most `size` tokens that together cover every token. */
  private windows(tokens: string[], size: number): string[][] {
    if (tokens.length <= size) return [tokens];
    const stride = Math.max(1, size - this.spec.windowOverlapTokens);
    const windows: string[][] = [];
    for (let start = 0; ; start += stride) {
      windows.push(tokens.slice(start, start + size));
      if (start + size >= tokens.length) break;
    }
    return windows;
  }

  async score(jobs: readonly ScoringJob[]): Promise<JobScores[]> {
    const { spec } = this;
    const cross = spec.family === 'cross-encoder';
    // Every sequence to run, and which (job, document) it belongs to; document -1 is a job's query.
    const sequences: Sequence[] = [];
    const owners: { job: number; document: number }[] = [];
    const windowCounts: number[] = [];
    jobs.forEach((job, jobIndex) => {
      let queryTokens = this.tokenizer.tokenize(spec.queryPrefix + job.query);
      // A query may take at most half of a sequence; the rest of it would not fit any window.
      const queryLimit = Math.floor((spec.maxTokens - (cross ? this.pairOverhead : this.singleOverhead)) / 2);
      if (queryTokens.length > queryLimit) queryTokens = queryTokens.slice(0, queryLimit);
      if (!cross) {
        sequences.push(this.sequence(queryTokens, null));
        owners.push({ job: jobIndex, document: -1 });
      }
      const windowSize = cross ? spec.maxTokens - this.pairOverhead - queryTokens.length : spec.maxTokens - this.singleOverhead;
      let windows = 0;
      job.documents.forEach((document, documentIndex) => {
        for (const window of this.windows(this.tokenizer.tokenize(spec.documentPrefix + document), windowSize)) {
          const sequence = cross ? this.sequence(queryTokens, window) : this.sequence(window, null);
          if (this.embeddingCache) sequence.cacheKey = sequence.ids.join(',');
          sequences.push(sequence);
          owners.push({ job: jobIndex, document: documentIndex });
          windows++;
        }
      });
      windowCounts.push(windows);
    });

    const outputs = await this.run(sequences);

    return jobs.map((job, jobIndex) => {
      const semantic = new Array<number>(job.documents.length).fill(Number.NEGATIVE_INFINITY);
      let queryVector: Float32Array | undefined;
      if (!cross) queryVector = outputs[owners.findIndex((owner) => owner.job === jobIndex && owner.document === -1)] as Float32Array;
      owners.forEach((owner, i) => {
        if (owner.job !== jobIndex || owner.document < 0) return;
        const value = cross ? (outputs[i] as number) : cosine(queryVector!, outputs[i] as Float32Array);
        if (value > semantic[owner.document]!) semantic[owner.document] = value;
      });
      return { semantic, lexical: inRequestBm25(job.query, job.documents), windows: windowCounts[jobIndex]! };
    });
  }

  /** Runs every sequence, shortest first so a batch pads little; returns logits or pooled vectors in input order. */
  private async run(sequences: readonly Sequence[]): Promise<Array<number | Float32Array>> {
    const results = new Array<number | Float32Array>(sequences.length);
    const toRun: number[] = [];
    sequences.forEach((sequence, i) => {
      const cached = sequence.cacheKey !== undefined ? this.embeddingCache!.get(sequence.cacheKey) : undefined;
      if (cached) {
        results[i] = cached;
        this.cacheStats.hits++;
      } else {
        toRun.push(i);
        if (sequence.cacheKey !== undefined) this.cacheStats.misses++;
      }
    });
    const order = toRun.sort((a, b) => sequences[a]!.ids.length - sequences[b]!.ids.length);
    let position = 0;
    while (position < order.length) {
      let end = position + 1;
      while (end < order.length && (end - position + 1) * sequences[order[end]!]!.ids.length <= this.options.maxBatchTokens) end++;
      const batch = order.slice(position, end);
      const outputs = await this.runBatch(batch.map((i) => sequences[i]!));
      batch.forEach((i, k) => {
        results[i] = outputs[k]!;
        const key = sequences[i]!.cacheKey;
        if (key !== undefined) this.embeddingCache!.set(key, outputs[k] as Float32Array);
      });
      position = end;
    }
    return results;
  }

  private async runBatch(batch: readonly Sequence[]): Promise<Array<number | Float32Array>> {
    const width = Math.max(1, ...batch.map((sequence) => sequence.ids.length));
    const size = batch.length * width;
    const inputIds = new BigInt64Array(size);
    const attention = new BigInt64Array(size);
    const typeIds = new BigInt64Array(size);
    batch.forEach((sequence, row) => {
      for (let column = 0; column < sequence.ids.length; column++) {
        inputIds[row * width + column] = BigInt(sequence.ids[column]!);
        attention[row * width + column] = 1n;
        typeIds[row * width + column] = BigInt(sequence.typeIds[column] ?? 0);
      }
    });
    const dims = [batch.length, width];
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', inputIds, dims),
      attention_mask: new ort.Tensor('int64', attention, dims),
    };
    if (this.feedsTypeIds) feeds.token_type_ids = new ort.Tensor('int64', typeIds, dims);
    const output = (await this.session.run(feeds, [this.spec.output]))[this.spec.output]!;
    const data = output.data as Float32Array;
    try {
      if (this.spec.family === 'cross-encoder') {
        const classes = output.dims.length > 1 ? Number(output.dims[1]) : 1;
        const index = Math.min(this.spec.logitIndex, classes - 1);
        return batch.map((_, row) => data[row * classes + index]!);
      }
      if (output.dims.length === 2) {
        const dimension = Number(output.dims[1]);
        return batch.map((_, row) => this.finish(data.slice(row * dimension, (row + 1) * dimension)));
      }
      const [, tokens, dimension] = output.dims.map(Number) as [number, number, number];
      return batch.map((sequence, row) => {
        const vector = new Float32Array(dimension);
        const base = row * tokens * dimension;
        if (this.spec.pooling === 'cls') {
          vector.set(data.subarray(base, base + dimension));
        } else {
          const length = sequence.ids.length;
          for (let token = 0; token < length; token++) {
            const offset = base + token * dimension;
            for (let d = 0; d < dimension; d++) vector[d]! += data[offset + d]!;
          }
          for (let d = 0; d < dimension; d++) vector[d]! /= Math.max(1, length);
        }
        return this.finish(vector);
      });
    } finally {
      output.dispose();
    }
  }

  private finish(vector: Float32Array): Float32Array {
    if (!this.spec.normalize) return vector;
    let norm = 0;
    for (const value of vector) norm += value * value;
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < vector.length; d++) vector[d]! /= norm;
    return vector;
  }
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return dot / (Math.sqrt(normA * normB) || 1);
}
