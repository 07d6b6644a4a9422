/**
 * The embedded neural reranker as the gateway sees it: score(query, documents, signal) → calibrated
 * scores in [0, 1].
 *
 * Requests wait in a bounded queue (counted in documents, so one huge request cannot hide behind a
 * small count); when the workers are free, as many queued requests as fit one dispatch go together,
 * so concurrent small requests share the model work instead of running one by one. A request whose
 * deadline passes while queued leaves the queue at once; one already running is answered with the
 * abort and its scores are dropped when they arrive (a running batch cannot be interrupted; the
 * documents it embedded still go into the cache).
 *
 * A dispatch becomes one task (scoring.ts): a bi-encoder's documents are looked up in the cache of
 * document embeddings, held here in the main thread, and only the unseen ones are embedded. The
 * task is cut into small parts that the worker threads, each with its own ONNX session, take one
 * after another, so that their batches run side by side and finish together: on a small CPU, one
 * single-threaded session per core does more per second than one session whose intra-op threads
 * must meet at every operator.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { DEFAULT_EMBEDDING_CACHE_BYTES, DocumentEmbeddingCache, type DocumentEmbedding } from './cache.js';
import { calibrate } from './calibration.js';
import { ModelDirectoryError, modelStamp, readModelDirectory, type RerankModelSpec } from './model.js';
import { emptyTask, scoreJobs, type EmbeddingResult, type EmbeddingTask, type JobScores, type ScoringJob } from './scoring.js';
import type { WorkerInit, WorkerReply, WorkerRequest } from './worker.js';

export interface NeuralRerankerOptions {
  /** ONNX Runtime threads over all workers; default: every core. */
  threads?: number;
  /**
   * Worker threads, each with its own ONNX session and `threads / workers` intra-op threads (at
   * least one); default: one per thread, at most 4.
   */
  workers?: number;
  /** Padded tokens per ONNX batch; default 512 (two windows of 256 tokens). */
  maxBatchTokens?: number;
  /** Documents one dispatch may carry, summed over the requests it groups; default 64. */
  maxDispatchDocuments?: number;
  /** Documents that may wait; more are refused with QueueFullError; default 4096. */
  maxQueuedDocuments?: number;
  /**
   * Bi-encoders: bytes of document embeddings kept for reuse, keyed by the document's text; default
   * 64 MiB (about 20,000 documents of 250 words with MiniLM); 0 turns the cache off.
   */
  embeddingCacheBytes?: number;
  /**
   * ONNX Runtime's CPU arena and memory patterns in each worker's session; default on, as ONNX
   * Runtime has them. Under the fuzz benchmark, off moved RSS by less than the run-to-run spread
   * (README, "Memory budget").
   */
  memoryArena?: boolean;
}

export const RERANKER_DEFAULTS = {
  maxBatchTokens: 512,
  maxDispatchDocuments: 64,
  maxQueuedDocuments: 4096,
  embeddingCacheBytes: DEFAULT_EMBEDDING_CACHE_BYTES,
  memoryArena: true,
  maxWorkers: 4,
} as const;

export class QueueFullError extends Error {
  constructor(readonly queuedDocuments: number) {
    super(`the local reranker is busy: ${queuedDocuments} documents are already waiting`);
    this.name = 'QueueFullError';
  }
}

interface QueuedJob {
  job: ScoringJob;
  resolve(scores: JobScores): void;
  reject(error: Error): void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  settled: boolean;
}

interface WorkerHandle {
  worker: Worker;
  exited: boolean;
}

const WORKER_SCRIPT = new URL('./worker.js', import.meta.url);
const CLOSE_GRACE_MS = 30_000;

type ResolvedOptions = Required<NeuralRerankerOptions> & { threadsPerWorker: number };

export class NeuralReranker {
  private readonly queue: QueuedJob[] = [];
  private queuedDocuments = 0;
  /** The requests of the running dispatch; they stay until it ends, even after they were failed. */
  private inFlight: QueuedJob[] | null = null;
  private running: Promise<void> | null = null;
  private closed: string | null = null;
  private closing: Promise<void> | null = null;
  private nextCallId = 1;
  private vectorDimensions = 0;
  /** Dispatches and embeddings running: while there are any, the workers keep the process alive. */
  private busy = 0;
  private readonly calls = new Map<number, { handle: WorkerHandle; resolve(result: EmbeddingResult): void; reject(error: Error): void }>();
  /** Bi-encoders: document embeddings by content; null for a cross-encoder or when turned off. */
  readonly cache: DocumentEmbeddingCache | null;
  /**
   * Dispatches sent and the requests they grouped, documents and their windows (cached ones
   * included), windows that came from the cache, and documents the model had to embed, for metrics
   * and tests.
   */
  readonly stats = { dispatches: 0, groupedRequests: 0, documents: 0, windows: 0, cachedWindows: 0, embeddedDocuments: 0 };

  private constructor(
    readonly spec: RerankModelSpec,
    readonly directory: string,
    private readonly workers: WorkerHandle[],
    readonly options: Readonly<ResolvedOptions>,
  ) {
    this.cache =
      spec.family === 'bi-encoder' && options.embeddingCacheBytes > 0 ? new DocumentEmbeddingCache(modelStamp(spec), options.embeddingCacheBytes) : null;
    for (const handle of workers) {
      handle.worker.on('message', (reply: WorkerReply) => this.onReply(reply));
      // A dead worker cannot be revived mid-request; the reranker refuses from then on (the provider
      // chain falls back or answers 503) rather than queueing work nobody will do.
      handle.worker.on('error', (error) => this.lose(handle, `reranker worker crashed: ${error.message}`));
      handle.worker.on('exit', () => {
        handle.exited = true;
        this.lose(handle, 'reranker worker stopped');
      });
      handle.worker.unref();
    }
  }

  /** Loads the model in the worker threads; rejects with ModelDirectoryError naming what is wrong. */
  static async open(modelDirectory: string, options: NeuralRerankerOptions = {}): Promise<NeuralReranker> {
    const { directory, spec } = readModelDirectory(modelDirectory);
    const threads = options.threads ?? availableParallelism();
    const workers = options.workers ?? Math.min(threads, RERANKER_DEFAULTS.maxWorkers);
    const resolved: ResolvedOptions = {
      threads,
      workers,
      threadsPerWorker: Math.max(1, Math.floor(threads / workers)),
      maxBatchTokens: options.maxBatchTokens ?? RERANKER_DEFAULTS.maxBatchTokens,
      maxDispatchDocuments: options.maxDispatchDocuments ?? RERANKER_DEFAULTS.maxDispatchDocuments,
      maxQueuedDocuments: options.maxQueuedDocuments ?? RERANKER_DEFAULTS.maxQueuedDocuments,
      embeddingCacheBytes: options.embeddingCacheBytes ?? RERANKER_DEFAULTS.embeddingCacheBytes,
      memoryArena: options.memoryArena ?? RERANKER_DEFAULTS.memoryArena,
    };
    const init: WorkerInit = { directory, spec, options: { threads: resolved.threadsPerWorker, maxBatchTokens: resolved.maxBatchTokens, memoryArena: resolved.memoryArena } };
    const handles: WorkerHandle[] = Array.from({ length: workers }, () => ({ worker: new Worker(WORKER_SCRIPT, { workerData: init }), exited: false }));
    const started = await Promise.allSettled(handles.map(({ worker }) => workerReady(worker)));
    const failure = started.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failure) {
      await Promise.all(handles.map(({ worker }) => worker.terminate()));
      throw failure.reason;
    }
    const reranker = new NeuralReranker(spec, directory, handles, resolved);
    if (spec.family === 'bi-encoder') {
      try {
        reranker.vectorDimensions = (await reranker.embed({ queries: ['probe'], documents: [] })).queries[0]!.length;
      } catch (error) {
        await reranker.close();
        throw new ModelDirectoryError(`reranker model ${directory} fails on a probe query: ${(error as Error).message}`);
      }
    }
    return reranker;
  }

  /** Raw model and lexical scores, before calibration: what `searchgate calibrate` fits on. */
  scoreRaw(query: string, documents: readonly string[], signal?: AbortSignal): Promise<JobScores> {
    if (this.closed) return Promise.reject(new Error(this.closed));
    if (signal?.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    if (documents.length === 0) return Promise.resolve({ semantic: [], lexical: [], windows: 0 });
    if (this.queuedDocuments + documents.length > this.options.maxQueuedDocuments && this.queue.length > 0) {
      return Promise.reject(new QueueFullError(this.queuedDocuments));
    }
    return new Promise<JobScores>((resolve, reject) => {
      const entry: QueuedJob = {
        job: { query, documents: [...documents] },
        resolve,
        reject,
        signal,
        settled: false,
        onAbort: () => {
          const position = this.queue.indexOf(entry);
          if (position >= 0) {
            this.queue.splice(position, 1);
            this.queuedDocuments -= entry.job.documents.length;
          }
          this.settle(entry, signal!.reason ?? new Error('aborted'));
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.queue.push(entry);
      this.queuedDocuments += documents.length;
      this.dispatch();
    });
  }

  /** Calibrated scores in [0, 1], one per document, in document order. */
  async score(query: string, documents: readonly string[], signal?: AbortSignal): Promise<number[]> {
    const { semantic, lexical } = await this.scoreRaw(query, documents, signal);
    return semantic.map((value, i) => calibrate(this.spec.calibration, value + this.spec.lexicalWeight * lexical[i]!, this.spec.family));
  }

  /**
   * Bi-encoders: vectors of queries and of documents' windows (the first `maxWindows` of each), for
   * the index. It skips the queue and the cache: the index stores what it gets, and a search
   * embeds one query. Runs on the same workers, between the rerank dispatches.
   */
  async embed(
    request: { queries: readonly string[]; documents: readonly string[]; maxWindows?: number },
    signal?: AbortSignal,
  ): Promise<{ queries: Float32Array[]; documents: DocumentEmbedding[] }> {
    if (this.spec.family !== 'bi-encoder') throw new Error(`${this.spec.id} is a cross-encoder: it makes no vectors`);
    if (this.closed) throw new Error(this.closed);
    signal?.throwIfAborted();
    const task: EmbeddingTask = { ...emptyTask(), queries: [...request.queries], documents: [...request.documents], maxWindows: request.maxWindows };
    const result = await this.keepingAlive(() => this.runTask(task));
    signal?.throwIfAborted();
    return { queries: result.queries, documents: result.documents };
  }

  /** Floats per vector (bi-encoders; 0 for a cross-encoder), known once the model has run at open. */
  get dimensions(): number {
    return this.vectorDimensions;
  }

  get pendingDocuments(): number {
    return this.queuedDocuments;
  }

  /**
   * Stops the workers once they are idle. Terminating one while ONNX Runtime is mid-batch would
   * abort the whole process (the native callback finds its JavaScript environment gone), so a running
   * dispatch is allowed to finish; its results are dropped.
   */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const running = this.running;
    this.stop('the local reranker is closed');
    await running;
    await Promise.all(
      this.workers.map(async (handle) => {
        if (handle.exited) return;
        const exited = new Promise<void>((resolve) => handle.worker.once('exit', () => resolve()));
        handle.worker.postMessage({ close: true } satisfies WorkerRequest);
        const force = setTimeout(() => void handle.worker.terminate(), CLOSE_GRACE_MS);
        await exited;
        clearTimeout(force);
      }),
    );
  }

  private stop(reason: string): void {
    this.closed ??= reason;
    this.failAll(new Error(reason));
  }

  /** A worker died or failed: its calls fail, and the reranker refuses from then on. */
  private lose(handle: WorkerHandle, reason: string): void {
    for (const [id, call] of this.calls) {
      if (call.handle !== handle) continue;
      this.calls.delete(id);
      call.reject(new Error(reason));
    }
    this.stop(reason);
  }

  /** Keeps the process alive while work is outstanding; idle workers must not. */
  private async keepingAlive<T>(work: () => Promise<T>): Promise<T> {
    if (this.busy++ === 0) for (const { worker } of this.workers) worker.ref();
    try {
      return await work();
    } finally {
      if (--this.busy === 0) for (const { worker } of this.workers) worker.unref();
    }
  }

  private dispatch(): void {
    if (this.running || this.queue.length === 0 || this.closed) return;
    const jobs: QueuedJob[] = [this.queue.shift()!];
    let documents = jobs[0]!.job.documents.length;
    while (this.queue.length > 0 && documents + this.queue[0]!.job.documents.length <= this.options.maxDispatchDocuments) {
      const next = this.queue.shift()!;
      documents += next.job.documents.length;
      jobs.push(next);
    }
    this.queuedDocuments -= documents;
    this.inFlight = jobs;
    this.stats.dispatches++;
    this.stats.groupedRequests += jobs.length;
    this.stats.documents += documents;
    this.running = this.keepingAlive(() => this.run(jobs)).finally(() => {
      this.inFlight = null;
      this.running = null;
      this.dispatch();
    });
  }

  private async run(jobs: QueuedJob[]): Promise<void> {
    try {
      const outcome = await scoreJobs(
        jobs.map((entry) => entry.job),
        {
          spec: this.spec,
          cache: this.cache,
          run: (task) => {
            if (!this.closed) this.stats.embeddedDocuments += task.documents.length;
            return this.runTask(task);
          },
        },
      );
      if (!this.closed) {
        this.stats.cachedWindows += outcome.cachedWindows;
        for (const scores of outcome.scores) this.stats.windows += scores.windows;
      }
      jobs.forEach((entry, i) => this.settle(entry, null, outcome.scores[i]!));
    } catch (error) {
      // Requests already failed (closing) or aborted are settled; settle() ignores them.
      for (const entry of jobs) this.settle(entry, new Error(`local reranker failed: ${(error as Error).message}`));
    }
  }

  /**
   * Runs a task on the workers: it is cut into small parts (a document or a few short ones each),
   * largest first, and each worker takes the next part as soon as it is done with one, so a worker
   * slowed by a neighbour or given denser text does not leave the other idle at the end. A worker
   * holds one part at a time (a second one queued would be a part the other worker could not take at
   * the end). Waits for every part (none may still run when the task settles) and merges.
   */
  private async runTask(task: EmbeddingTask): Promise<EmbeddingResult> {
    const parts = taskParts(task, this.workers.length);
    const results = new Array<EmbeddingResult>(parts.length);
    let next = 0;
    let failure: unknown = null;
    const lane = async (handle: WorkerHandle) => {
      while (next < parts.length && failure === null) {
        const index = next++;
        try {
          results[index] = await this.call(handle, parts[index]!.task);
        } catch (error) {
          failure ??= error;
        }
      }
    };
    await Promise.all(this.workers.map(lane));
    if (failure !== null) throw failure;
    return mergeResults(task, parts, results);
  }

  private call(handle: WorkerHandle, task: EmbeddingTask): Promise<EmbeddingResult> {
    if (handle.exited) return Promise.reject(new Error('reranker worker stopped'));
    const id = this.nextCallId++;
    return new Promise<EmbeddingResult>((resolve, reject) => {
      this.calls.set(id, { handle, resolve, reject });
      handle.worker.postMessage({ id, task } satisfies WorkerRequest);
    });
  }

  private onReply(reply: WorkerReply): void {
    if (!('id' in reply)) return;
    const call = this.calls.get(reply.id);
    if (!call) return;
    this.calls.delete(reply.id);
    if ('error' in reply) call.reject(new Error(reply.error));
    else call.resolve(reply.result);
  }

  private settle(entry: QueuedJob, error: Error | null, scores?: JobScores): void {
    if (entry.settled) return;
    entry.settled = true;
    entry.signal?.removeEventListener('abort', entry.onAbort);
    if (error) entry.reject(error);
    else entry.resolve(scores!);
  }

  private failAll(error: Error): void {
    for (const entry of this.queue.splice(0)) this.settle(entry, error);
    this.queuedDocuments = 0;
    for (const entry of this.inFlight ?? []) this.settle(entry, error);
  }
}

function workerReady(worker: Worker): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMessage = (reply: WorkerReply) => {
      worker.off('error', onError);
      if ('ready' in reply) resolve();
      else if ('failed' in reply) reject(new ModelDirectoryError(reply.failed));
    };
    const onError = (error: Error) => {
      worker.off('message', onMessage);
      reject(new ModelDirectoryError(`reranker worker failed to start: ${error.message}`));
    };
    worker.once('message', onMessage);
    worker.once('error', onError);
  });
}

/** A part of a task, and where its answers go in the whole. */
export interface TaskPart {
  task: EmbeddingTask;
  queries: number[];
  documents: number[];
  /** Per entry of task.pairs: the job it belongs to and the indices of its documents there. */
  pairs: { job: number; documents: number[] }[];
  lexical: number[];
}

/**
 * Text of about one 256-token window: documents are grouped into parts until one holds this much, so
 * short texts (search snippets) still share a part, and a batch, while long ones go one by one.
 */
export const PART_CHARACTERS = 1024;

/**
 * BM25 of a request costs about 1/200 of embedding the same text (stemming against a model pass): its
 * weight when parts are ordered.
 */
const LEXICAL_COST_SHARE = 1 / 200;

/**
 * Cuts a task into parts for `workers` workers to take one after another: every document (or run of
 * short documents) a part, every cross-encoder document with its query likewise, all queries one part,
 * each request's BM25 one part; largest first, so the small ones fill in at the end. One worker gets
 * the whole task as one part. An empty task has no parts.
 */
export function taskParts(task: EmbeddingTask, workers: number): TaskPart[] {
  const empty = (): TaskPart => ({ task: { ...emptyTask(), maxWindows: task.maxWindows }, queries: [], documents: [], pairs: [], lexical: [] });
  if (task.queries.length + task.documents.length + task.pairs.length + task.lexical.length === 0) return [];
  if (workers <= 1) {
    const indices = (items: readonly unknown[]) => items.map((_, i) => i);
    return [
      {
        task,
        queries: indices(task.queries),
        documents: indices(task.documents),
        pairs: task.pairs.map((job, j) => ({ job: j, documents: indices(job.documents) })),
        lexical: indices(task.lexical),
      },
    ];
  }
  const parts: { part: TaskPart; weight: number }[] = [];
  if (task.queries.length > 0) {
    const part = empty();
    part.task.queries = [...task.queries];
    part.queries = task.queries.map((_, i) => i);
    parts.push({ part, weight: task.queries.reduce((sum, query) => sum + query.length, 0) });
  }
  // Documents longest first, cut into runs of at least PART_CHARACTERS; `add` puts one in a part and
  // says what it weighs.
  const byLength = (texts: readonly string[]) => texts.map((_, i) => i).sort((a, b) => texts[b]!.length - texts[a]!.length);
  const cutIntoRuns = (order: readonly number[], open: () => TaskPart, add: (part: TaskPart, i: number) => number) => {
    let run: { part: TaskPart; weight: number } | null = null;
    for (const i of order) {
      run ??= { part: open(), weight: 0 };
      run.weight += add(run.part, i);
      if (run.weight >= PART_CHARACTERS) {
        parts.push(run);
        run = null;
      }
    }
    if (run) parts.push(run);
  };
  cutIntoRuns(byLength(task.documents), empty, (part, i) => {
    part.task.documents.push(task.documents[i]!);
    part.documents.push(i);
    return Math.min(task.documents[i]!.length, (task.maxWindows ?? Infinity) * PART_CHARACTERS);
  });
  task.pairs.forEach((job, j) =>
    cutIntoRuns(
      byLength(job.documents),
      () => {
        const part = empty();
        part.task.pairs.push({ query: job.query, documents: [] });
        part.pairs.push({ job: j, documents: [] });
        return part;
      },
      (part, k) => {
        part.task.pairs[0]!.documents.push(job.documents[k]!);
        part.pairs[0]!.documents.push(k);
        return job.documents[k]!.length + job.query.length;
      },
    ),
  );
  task.lexical.forEach((job, j) => {
    const part = empty();
    part.task.lexical.push(job);
    part.lexical.push(j);
    parts.push({ part, weight: job.documents.reduce((sum, document) => sum + document.length, 0) * LEXICAL_COST_SHARE });
  });
  // Stable: equal weights keep their order.
  return parts.sort((a, b) => b.weight - a.weight).map(({ part }) => part);
}

/** The parts' results put back in the order of the whole task. */
export function mergeResults(task: EmbeddingTask, parts: readonly TaskPart[], results: readonly EmbeddingResult[]): EmbeddingResult {
  const merged: EmbeddingResult = {
    queries: new Array(task.queries.length),
    documents: new Array(task.documents.length),
    pairs: task.pairs.map((job) => ({ semantic: new Array<number>(job.documents.length), windows: new Array<number>(job.documents.length) })),
    lexical: new Array(task.lexical.length),
  };
  parts.forEach((part, p) => {
    const result = results[p]!;
    part.queries.forEach((i, k) => (merged.queries[i] = result.queries[k]!));
    part.documents.forEach((i, k) => (merged.documents[i] = result.documents[k]!));
    part.pairs.forEach((entry, slot) =>
      entry.documents.forEach((i, k) => {
        merged.pairs[entry.job]!.semantic[i] = result.pairs[slot]!.semantic[k]!;
        merged.pairs[entry.job]!.windows[i] = result.pairs[slot]!.windows[k]!;
      }),
    );
    part.lexical.forEach((i, k) => (merged.lexical[i] = result.lexical[k]!));
  });
  return merged;
}
