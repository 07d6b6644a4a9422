/**
 * The embedded neural reranker as the gateway sees it: score(query, documents, signal) → calibrated
 * scores in [0, 1].
 *
 * Requests wait in a bounded queue (counted in documents, so one huge request cannot hide behind a
 * small count); when the worker is free, as many queued requests as fit one dispatch go together, so
 * concurrent small requests share ONNX batches instead of running one by one. A request whose
 * deadline passes while queued leaves the queue at once; one already running is answered with the
 * abort and its scores are dropped when they arrive (a running batch cannot be interrupted).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { calibrate } from './calibration.js';
import type { JobScores, ScoringJob } from './inference.js';
import { ModelDirectoryError, readModelDirectory, type RerankModelSpec } from './model.js';
import type { WorkerInit, WorkerReply, WorkerRequest } from './worker.js';

export interface NeuralRerankerOptions {
  /** ONNX Runtime threads; default: every core. */
  threads?: number;
  /** Padded tokens per ONNX batch; default 8192 (32 windows of 256 tokens). */
  maxBatchTokens?: number;
  /** Documents one dispatch to the worker may carry, summed over the requests it groups; default 64. */
  maxDispatchDocuments?: number;
  /** Documents that may wait; more are refused with QueueFullError; default 4096. */
  maxQueuedDocuments?: number;
  /** Bi-encoders: document-window embeddings kept for reuse; default 16384 (about 25 MB for MiniLM). */
  embeddingCacheEntries?: number;
}

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

const WORKER_SCRIPT = new URL('./worker.js', import.meta.url);
const CLOSE_GRACE_MS = 30_000;

export class NeuralReranker {
  private readonly queue: QueuedJob[] = [];
  private queuedDocuments = 0;
  /** The dispatch the worker is running; it stays until the worker answers, even after its requests were failed. */
  private inFlight: { id: number; jobs: QueuedJob[] } | null = null;
  private exited = false;
  private nextId = 1;
  private closed: string | null = null;
  /** Dispatches sent and the requests they grouped, for metrics and tests. */
  readonly stats = { dispatches: 0, groupedRequests: 0, documents: 0, windows: 0, cachedWindows: 0 };

  private constructor(
    readonly spec: RerankModelSpec,
    readonly directory: string,
    private readonly worker: Worker,
    private readonly options: Required<NeuralRerankerOptions>,
  ) {
    worker.on('message', (reply: WorkerReply) => this.onReply(reply));
    // A dead worker cannot be revived mid-request; the reranker refuses from then on (the provider
    // chain falls back or answers 503) rather than queueing work nobody will do.
    worker.on('error', (error) => this.stop(`reranker worker crashed: ${error.message}`));
    worker.on('exit', () => {
      this.exited = true;
      this.inFlight = null;
      this.onIdle?.();
      this.stop('reranker worker stopped');
    });
    worker.unref();
  }

  /** Loads the model in a worker thread; rejects with ModelDirectoryError naming what is wrong. */
  static async open(modelDirectory: string, options: NeuralRerankerOptions = {}): Promise<NeuralReranker> {
    const { directory, spec } = readModelDirectory(modelDirectory);
    const resolved: Required<NeuralRerankerOptions> = {
      threads: options.threads ?? availableParallelism(),
      maxBatchTokens: options.maxBatchTokens ?? 8192,
      maxDispatchDocuments: options.maxDispatchDocuments ?? 64,
      maxQueuedDocuments: options.maxQueuedDocuments ?? 4096,
      embeddingCacheEntries: options.embeddingCacheEntries ?? 16_384,
    };
    const init: WorkerInit = {
      directory,
      spec,
      options: { threads: resolved.threads, maxBatchTokens: resolved.maxBatchTokens, embeddingCacheEntries: resolved.embeddingCacheEntries },
    };
    const worker = new Worker(WORKER_SCRIPT, { workerData: init });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (reply: WorkerReply) => {
        worker.off('error', onError);
        if ('ready' in reply) resolve();
        else if ('failed' in reply) {
          void worker.terminate();
          reject(new ModelDirectoryError(reply.failed));
        }
      };
      const onError = (error: Error) => reject(new ModelDirectoryError(`reranker worker failed to start: ${error.message}`));
      worker.once('message', onMessage);
      worker.once('error', onError);
    });
    return new NeuralReranker(spec, directory, worker, resolved);
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

  get pendingDocuments(): number {
    return this.queuedDocuments;
  }

  /**
   * Stops the worker once it is idle. Terminating it while ONNX Runtime is mid-batch would abort the
   * whole process (the native callback finds its JavaScript environment gone), so a running batch is
   * allowed to finish; its results are dropped.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const running = this.inFlight ? new Promise<void>((resolve) => (this.onIdle = resolve)) : Promise.resolve();
    this.stop('the local reranker is closed');
    await running;
    if (this.exited) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage({ close: true } satisfies WorkerRequest);
    const force = setTimeout(() => void this.worker.terminate(), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(force);
  }

  private stop(reason: string): void {
    this.closed ??= reason;
    this.failAll(new Error(reason));
  }

  /** Called when the in-flight dispatch ends while closing. */
  private onIdle: (() => void) | null = null;

  private dispatch(): void {
    if (this.inFlight || this.queue.length === 0 || this.closed) return;
    const jobs: QueuedJob[] = [this.queue.shift()!];
    let documents = jobs[0]!.job.documents.length;
    while (this.queue.length > 0 && documents + this.queue[0]!.job.documents.length <= this.options.maxDispatchDocuments) {
      const next = this.queue.shift()!;
      documents += next.job.documents.length;
      jobs.push(next);
    }
    this.queuedDocuments -= documents;
    const id = this.nextId++;
    this.inFlight = { id, jobs };
    this.stats.dispatches++;
    this.stats.groupedRequests += jobs.length;
    this.stats.documents += documents;
    // Keep the process alive while work is outstanding; an idle worker must not.
    this.worker.ref();
    this.worker.postMessage({ id, jobs: jobs.map((entry) => entry.job) } satisfies WorkerRequest);
  }

  private onReply(reply: WorkerReply): void {
    if (!('id' in reply) || reply.id !== this.inFlight?.id) return;
    const { jobs } = this.inFlight;
    this.inFlight = null;
    this.worker.unref();
    this.onIdle?.();
    // Requests already failed (closing) or aborted are settled; settle() ignores them.
    if ('error' in reply) {
      for (const entry of jobs) this.settle(entry, new Error(`local reranker failed: ${reply.error}`));
    } else {
      if (!this.closed) {
        this.stats.cachedWindows += reply.cacheHits;
        for (const scores of reply.scores) this.stats.windows += scores.windows;
      }
      jobs.forEach((entry, i) => this.settle(entry, null, reply.scores[i]!));
    }
    this.dispatch();
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
    for (const entry of this.inFlight?.jobs ?? []) this.settle(entry, error);
  }
}
