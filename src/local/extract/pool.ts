/**
 * Extraction off the event loop. Readability and the HTML parser are synchronous and take tens of
 * milliseconds per page (seconds on a pathological one), which would stall every request the
 * gateway is serving; worker threads keep the loop free and let pages be extracted in parallel.
 *
 * Each page has a time limit. A worker that overruns it is terminated (a synchronous parse cannot be
 * interrupted any other way), the page yields an empty text, and a fresh worker takes the next task.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ExtractedPage } from '../types.js';
import { documentKind, emptyPage, type DocumentSource, type ExtractionOptions } from './document-kind.js';

export interface ExtractorPoolOptions {
  /** Worker threads; default: one per CPU but one, at least one. */
  size?: number;
  /** Longest one page may take; default 10 s. */
  timeLimitMs?: number;
  /** HTML beyond this many bytes (characters, for decoded HTML) is cut off before parsing; default 5 MiB. */
  maxHtmlBytes?: number;
  /** Larger PDFs are not parsed at all (cutting one short makes it unreadable); default 20 MiB. */
  maxPdfBytes?: number;
}

export const EXTRACTOR_POOL_DEFAULTS = {
  timeLimitMs: 10_000,
  maxHtmlBytes: 5 * 1024 * 1024,
  maxPdfBytes: 20 * 1024 * 1024,
} as const;

/** A task as the caller hands it over. */
type TaskInput =
  | { kind: 'document'; bytes: Uint8Array; url: string; contentType: string | null; options: ExtractionOptions }
  | { kind: 'html'; html: string; url: string; options: ExtractionOptions };

/** What a worker thread receives: the task and the id its reply must carry. */
export type WorkerTask = TaskInput & { id: number };

type TaskReply = { id: number; page: ExtractedPage } | { id: number; error: string };
/** A task's outcome, or the worker announcing it has loaded. */
export type WorkerReply = TaskReply | { ready: true };

interface PendingTask {
  input: TaskInput;
  resolve(page: ExtractedPage): void;
  reject(error: Error): void;
}

interface PoolWorker {
  thread: Worker;
  /** Set once the thread has loaded the extractor: start-up time must not count against a page. */
  ready: boolean;
  busyWith: { id: number; task: PendingTask; timer: NodeJS.Timeout } | null;
}

const WORKER_SCRIPT = new URL('./worker.js', import.meta.url);
/** Longest close() waits for one worker thread to stop. */
const RETIRE_WAIT_MS = 2000;

export class ExtractorPool {
  private readonly size: number;
  private readonly timeLimitMs: number;
  private readonly maxHtmlBytes: number;
  private readonly maxPdfBytes: number;
  private readonly workers = new Set<PoolWorker>();
  private readonly queue: PendingTask[] = [];
  private nextTaskId = 1;
  private closed = false;
  /** Whether the workers are ref'd: see holdProcessWhileOwing. */
  private holdingProcess = true;
  /** Pages that hit the time limit since the pool started. */
  timeouts = 0;

  constructor(options: ExtractorPoolOptions = {}) {
    this.size = Math.max(1, Math.floor(options.size ?? availableParallelism() - 1));
    this.timeLimitMs = options.timeLimitMs ?? EXTRACTOR_POOL_DEFAULTS.timeLimitMs;
    this.maxHtmlBytes = options.maxHtmlBytes ?? EXTRACTOR_POOL_DEFAULTS.maxHtmlBytes;
    this.maxPdfBytes = options.maxPdfBytes ?? EXTRACTOR_POOL_DEFAULTS.maxPdfBytes;
  }

  /** Fetched bytes of any supported kind (HTML, PDF, plain text); see extractDocument. */
  extract(bytes: Uint8Array, source: DocumentSource, options: ExtractionOptions = {}): Promise<ExtractedPage> {
    const kind = documentKind(bytes, source.contentType);
    if (kind === 'unsupported' || (kind === 'pdf' && bytes.byteLength > this.maxPdfBytes)) return Promise.resolve(emptyPage());
    const capped = kind === 'pdf' ? bytes : bytes.subarray(0, this.maxHtmlBytes);
    return this.submit({ kind: 'document', bytes: capped, url: source.url, contentType: source.contentType ?? null, options });
  }

  /** HTML already decoded to text; see extractHtml. */
  extractHtml(html: string, url: string, options: ExtractionOptions = {}): Promise<ExtractedPage> {
    return this.submit({ kind: 'html', html: html.slice(0, this.maxHtmlBytes), url, options });
  }

  /** Stops every worker; tasks still queued or running are rejected. */
  async close(): Promise<void> {
    this.closed = true;
    const closedError = new Error('ExtractorPool is closed');
    for (const task of this.queue.splice(0)) task.reject(closedError);
    const stopping = [...this.workers].map((worker) => {
      if (worker.busyWith) {
        clearTimeout(worker.busyWith.timer);
        worker.busyWith.task.reject(closedError);
        worker.busyWith = null;
      }
      return this.retire(worker);
    });
    await Promise.all(stopping);
  }

  private submit(input: TaskInput): Promise<ExtractedPage> {
    if (this.closed) return Promise.reject(new Error('ExtractorPool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.dispatch();
    });
  }

  /** Hands queued tasks to idle workers, and starts workers for the rest, up to the pool's size. */
  private dispatch(): void {
    let starting = 0;
    for (const worker of this.workers) {
      if (!worker.ready) starting += 1;
      else if (!worker.busyWith && this.queue.length > 0) this.run(worker, this.queue.shift()!);
    }
    const wanted = Math.min(this.queue.length - starting, this.size - this.workers.size);
    for (let count = 0; count < wanted; count += 1) this.spawn();
    this.holdProcessWhileOwing();
  }

  /**
   * The pool keeps the process alive exactly while it owes an answer (a task queued or running),
   * and never once it is idle. Decided for the pool as a whole, after every change, rather than per
   * worker as each finishes: a worker's ref is then never dropped while another's task is pending.
   */
  private holdProcessWhileOwing(): void {
    const owing = this.queue.length > 0 || [...this.workers].some((worker) => worker.busyWith !== null);
    if (owing === this.holdingProcess) return;
    this.holdingProcess = owing;
    for (const worker of this.workers) {
      if (owing) worker.thread.ref();
      else worker.thread.unref();
    }
  }

  /** Counts for a diagnostic: tasks waiting, and workers starting, busy and idle. */
  describe(): string {
    const workers = [...this.workers];
    const busy = workers.filter((worker) => worker.busyWith !== null).length;
    const starting = workers.filter((worker) => !worker.ready).length;
    return `${this.queue.length} queued, ${starting} workers starting, ${busy} busy, ${workers.length - busy - starting} idle`;
  }

  private run(worker: PoolWorker, task: PendingTask): void {
    const id = this.nextTaskId++;
    const timer = setTimeout(() => this.timeOut(worker), this.timeLimitMs);
    worker.busyWith = { id, task, timer };
    const message: WorkerTask = { ...task.input, id };
    worker.thread.postMessage(message);
  }

  private spawn(): void {
    // A new thread is ref'd; spawn is only called for queued work, which holds the process anyway.
    const worker: PoolWorker = { thread: new Worker(WORKER_SCRIPT), ready: false, busyWith: null };
    worker.thread.on('message', (reply: WorkerReply) => {
      if ('ready' in reply) {
        worker.ready = true;
        this.dispatch();
      } else {
        this.finish(worker, reply);
      }
    });
    worker.thread.on('error', (error) => this.fail(worker, error));
    worker.thread.on('exit', (code) => this.fail(worker, new Error(`extractor worker exited with code ${code}`)));
    this.workers.add(worker);
  }

  private finish(worker: PoolWorker, reply: TaskReply): void {
    const current = worker.busyWith;
    if (!current || current.id !== reply.id) return;
    clearTimeout(current.timer);
    worker.busyWith = null;
    if ('page' in reply) current.task.resolve(reply.page);
    else current.task.reject(new Error(`extraction failed: ${reply.error}`));
    this.dispatch();
  }

  private timeOut(worker: PoolWorker): void {
    const current = worker.busyWith;
    if (!current) return;
    this.timeouts += 1;
    worker.busyWith = null;
    current.task.resolve(emptyPage());
    void this.retire(worker);
    this.dispatch();
  }

  /** The worker died (crashed, ran out of memory): its page fails, and a new worker is made on demand. */
  private fail(worker: PoolWorker, error: Error): void {
    if (!this.workers.delete(worker)) return;
    const current = worker.busyWith;
    if (current) {
      clearTimeout(current.timer);
      worker.busyWith = null;
      current.task.reject(error);
    }
    if (!worker.ready) {
      // A worker that cannot even start will not start next time either: fail what waits rather
      // than respawn in a loop.
      for (const task of this.queue.splice(0)) task.reject(error);
      this.holdProcessWhileOwing();
      return;
    }
    this.dispatch();
  }

  private async retire(worker: PoolWorker): Promise<void> {
    this.workers.delete(worker);
    // terminate() resolves on the thread's 'exit'. The wait is bounded by a timer, which also holds
    // the event loop meanwhile: a thread slow to stop (or an exit that never reaches this side)
    // cannot stall close(), nor let the loop run dry under a caller's await. Exiting the process
    // ends a thread still stopping.
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, RETIRE_WAIT_MS);
    });
    await Promise.race([worker.thread.terminate(), bounded]);
    clearTimeout(timer);
  }
}
