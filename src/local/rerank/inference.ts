/**
 * Model work inside one thread: tokenize, cut long documents into overlapping windows, run the ONNX
 * graph over length-sorted batches, pool. The unit of work is an EmbeddingTask (queries and documents
 * to embed, cross-encoder pairs to score, BM25 to compute); the engine splits one task across its
 * worker threads, each of which owns one InferenceSession (worker.ts). `score` puts the pieces
 * together in the calling thread, for the command line and the benchmarks (scoring.ts has the logic
 * shared with the engine).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import * as ort from 'onnxruntime-node';
import type { DocumentEmbedding } from './cache.js';
import { inRequestBm25 } from './lexical.js';
import { ModelDirectoryError, type RerankModelSpec } from './model.js';
import { scoreJobs, type EmbeddingResult, type EmbeddingTask, type JobScores, type ScoringJob } from './scoring.js';

export type { EmbeddingResult, EmbeddingTask, JobScores, ScoringJob } from './scoring.js';

export interface InferenceOptions {
  /** Threads ONNX Runtime uses for one batch (intra-op). */
  threads: number;
  /**
   * Padded tokens one batch may hold (sequences × longest sequence); at least one sequence always
   * runs, and a dynamically quantized graph always runs one. Small batches are faster per token on a
   * CPU (the activations stay in cache): 512 runs two 256-token windows at a time.
   */
  maxBatchTokens: number;
  /**
   * ONNX Runtime's CPU arena and memory patterns: the session keeps the buffers of its largest batch
   * (and a plan per input shape) for reuse instead of asking malloc for each run. See
   * NeuralRerankerOptions.memoryArena.
   */
  memoryArena: boolean;
}

/** No word-piece covers more characters than this (a long URL or a run of digits may come close). */
const CHARACTERS_PER_TOKEN_BOUND = 16;

/** The start of `text` that holds at least its first `tokens` tokens (CHARACTERS_PER_TOKEN_BOUND each). */
const openingFor = (text: string, tokens: number) => {
  const characters = tokens * CHARACTERS_PER_TOKEN_BOUND;
  return text.length > characters ? text.slice(0, characters) : text;
};

/**
 * A longer text is tokenized in pieces of about this many characters. The tokenizer's working memory
 * grows with its input: a 500 KB document took 120 MB of a worker's heap at once, which V8 then
 * kept (docs/benchmarks.md, "Memory under hostile traffic"); in pieces it takes a few MB.
 */
export const TOKENIZE_PIECE_CHARACTERS = 16_384;

interface Sequence {
  ids: number[];
  typeIds: number[];
}

type PostProcess = (tokens: string[], pair: string[] | null, addSpecialTokens: boolean) => { tokens: string[]; token_type_ids?: number[] };

export class InferenceSession {
  private readonly postProcess: PostProcess;
  private readonly unknownId: number;
  /** Special tokens one sequence of one text (single) or two (pair) carries. */
  private readonly singleOverhead: number;
  private readonly pairOverhead: number;
  private readonly feedsTypeIds: boolean;
  /** A dynamically quantized graph runs each sequence alone (see RerankModelSpec.quantization). */
  private readonly singleSequenceBatches: boolean;

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
    this.singleSequenceBatches = spec.quantization === 'dynamic-int8';
  }

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
        enableCpuMemArena: options.memoryArena,
        enableMemPattern: options.memoryArena,
        // Threads that spin while waiting for work steal the CPU from the other workers and from the
        // gateway on a small machine; a shared one makes a spinning pool much slower (benchmarks.md).
        extra: { session: { intra_op: { allow_spinning: '0' } } },
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
      const probe: ScoringJob = { query: 'probe', documents: ['probe document'] };
      await inference.run(
        spec.family === 'cross-encoder'
          ? { queries: [], documents: [], pairs: [probe], lexical: [] }
          : { queries: [probe.query], documents: probe.documents, pairs: [], lexical: [] },
      );
    } catch (error) {
      throw new ModelDirectoryError(`reranker model ${modelPath} fails on a probe input: ${(error as Error).message}`);
    }
    return inference;
  }

  async close(): Promise<void> {
    await this.session.release();
  }

  /** Raw scores of each job, in this thread (no cache: the engine keeps one in the main thread). */
  async score(jobs: readonly ScoringJob[]): Promise<JobScores[]> {
    return (await scoreJobs(jobs, { spec: this.spec, cache: null, run: (task) => this.run(task) })).scores;
  }

  /** Does a task's model work and BM25 in this thread. */
  async run(task: EmbeddingTask): Promise<EmbeddingResult> {
    const { spec } = this;
    const sequences: Sequence[] = [];
    const queryRows = task.queries.map((query) => sequences.push(this.sequence(this.queryTokens(query, false), null)) - 1);
    const documentWindowSize = spec.maxTokens - this.singleOverhead;
    const documentRows = task.documents.map((document) =>
      this.documentWindows(document, documentWindowSize, task.maxWindows).map((window) => sequences.push(this.sequence(window, null)) - 1),
    );
    const pairRows = task.pairs.map((job) => {
      const queryTokens = this.queryTokens(job.query, true);
      const windowSize = spec.maxTokens - this.pairOverhead - queryTokens.length;
      return job.documents.map((document) =>
        this.documentWindows(document, windowSize, undefined).map((window) => sequences.push(this.sequence(queryTokens, window)) - 1),
      );
    });

    const outputs = await this.runSequences(sequences);

    const vectorAt = (row: number) => outputs[row] as Float32Array;
    return {
      queries: queryRows.map(vectorAt),
      documents: documentRows.map((rows): DocumentEmbedding => {
        // One buffer per document, so that it can be transferred between threads and cached alone.
        const dimension = vectorAt(rows[0]!).length;
        const vectors = new Float32Array(rows.length * dimension);
        rows.forEach((row, i) => vectors.set(vectorAt(row), i * dimension));
        return { vectors, windows: rows.length };
      }),
      pairs: pairRows.map((documents) => ({
        semantic: documents.map((rows) => Math.max(...rows.map((row) => outputs[row] as number))),
        windows: documents.map((rows) => rows.length),
      })),
      lexical: task.lexical.map((job) => inRequestBm25(job.query, job.documents)),
    };
  }

  /**
   * A document's windows, at most `maxWindows` of them; a capped document is cut before it is
   * tokenized, at far more characters than its windows can hold, so a long page costs its opening.
   */
  private documentWindows(document: string, size: number, maxWindows: number | undefined): string[][] {
    const text = this.spec.documentPrefix + document;
    if (maxWindows === undefined) return this.windows(this.tokenize(text), size);
    return this.windows(this.tokenize(openingFor(text, maxWindows * size)), size).slice(0, Math.max(1, maxWindows));
  }

  /** A query's tokens; it may take at most half of a sequence, the rest of it would not fit any window. */
  private queryTokens(query: string, pair: boolean): string[] {
    const limit = Math.floor((this.spec.maxTokens - (pair ? this.pairOverhead : this.singleOverhead)) / 2);
    const tokens = this.tokenize(openingFor(this.spec.queryPrefix + query, limit));
    return tokens.length > limit ? tokens.slice(0, limit) : tokens;
  }

  /**
   * The text's tokens, as the tokenizer gives them for the whole text, made piece by piece
   * (TOKENIZE_PIECE_CHARACTERS). A piece ends before a whitespace: no token spans one, and the
   * whitespace goes with the word after it, as word-piece, SentencePiece and byte-level
   * tokenizers all read it. Only a run of that many characters without any is cut where it is.
   */
  tokenize(text: string): string[] {
    if (text.length <= TOKENIZE_PIECE_CHARACTERS) return this.tokenizer.tokenize(text);
    const tokens: string[] = [];
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + TOKENIZE_PIECE_CHARACTERS);
      if (end < text.length) {
        const space = text.slice(start + 1, end + 1).search(/\s\S*$/);
        if (space >= 0) end = start + 1 + space;
        // Never between the halves of a surrogate pair.
        else if ((text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
      }
      for (const token of this.tokenizer.tokenize(text.slice(start, end))) tokens.push(token);
      start = end;
    }
    return tokens;
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

  /** Runs every sequence, shortest first so a batch pads little; returns logits or pooled vectors in input order. */
  private async runSequences(sequences: readonly Sequence[]): Promise<Array<number | Float32Array>> {
    const results = new Array<number | Float32Array>(sequences.length);
    const order = sequences.map((_, i) => i).sort((a, b) => sequences[a]!.ids.length - sequences[b]!.ids.length);
    let position = 0;
    while (position < order.length) {
      let end = position + 1;
      while (end < order.length && !this.singleSequenceBatches && (end - position + 1) * sequences[order[end]!]!.ids.length <= this.options.maxBatchTokens) end++;
      const batch = order.slice(position, end);
      const outputs = await this.runBatch(batch.map((i) => sequences[i]!));
      batch.forEach((i, k) => (results[i] = outputs[k]!));
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
