/**
 * One full garbage collection once the process has gone quiet after work.
 *
 * V8 collects its old generation when allocation asks for it. After a burst of large requests the
 * garbage therefore stays, with the pages that hold it, until the next burst: under bench:fuzz, the
 * main thread's heap held 116 MiB a minute after the last request, against 48 MiB once collected
 * (docs/benchmarks.md, "Memory under hostile traffic"). Collecting while quiet gives those pages
 * back, at no cost to a request: the process is idle by definition, and a request that arrives
 * during the collection waits for it (tens of milliseconds).
 *
 * "Quiet" is read from the process's CPU time, so that nothing is added to a request's path: the
 * process (the main thread, the reranker's workers, LanceDB's and ONNX Runtime's threads) used less
 * than QUIET_CPU_SHARE of one core over the last `quietMs`. A collection runs only when the heap has
 * grown by at least GROWTH_BYTES since the last one, so an idle process is not collected again and
 * again (a Prometheus scrape every 15 s makes one collection an hour or so).
 */
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Below this share of one core, the process counts as quiet. */
const QUIET_CPU_SHARE = 0.02;
/** Heap growth since the last collection that makes another worth it. */
const GROWTH_BYTES = 8 * 2 ** 20;

export interface IdleCollectorOptions {
  /** How long the process must stay quiet before it is collected; 0 turns the collector off. */
  quietMs: number;
  /** Called after each collection, with the heap's used bytes before and after. */
  onCollected?: (before: number, after: number) => void;
  /** For tests: the collector, CPU time (µs) and heap reading. */
  collect?: () => void;
  cpuMicros?: () => number;
  heapUsed?: () => number;
}

export class IdleCollector {
  private collect: (() => void) | undefined;
  private readonly cpuMicros: () => number;
  private readonly heapUsed: () => number;
  private timer: NodeJS.Timeout | null = null;
  private lastCpu = 0;
  private quietFor = 0;
  private usedAfterLast: number;

  constructor(private readonly options: IdleCollectorOptions) {
    this.collect = options.collect;
    this.cpuMicros = options.cpuMicros ?? cpuMicrosOfProcess;
    this.heapUsed = options.heapUsed ?? (() => getHeapStatistics().used_heap_size);
    this.usedAfterLast = this.heapUsed();
  }

  /** Checks every quarter of `quietMs`; the timer never keeps the process alive. */
  start(): void {
    if (this.options.quietMs <= 0 || this.timer) return;
    const interval = Math.max(250, Math.floor(this.options.quietMs / 4));
    this.lastCpu = this.cpuMicros();
    this.timer = setInterval(() => this.check(interval), interval);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One check, `intervalMs` after the last: public for tests. */
  check(intervalMs: number): boolean {
    const cpu = this.cpuMicros();
    const busyShare = (cpu - this.lastCpu) / 1000 / intervalMs;
    this.lastCpu = cpu;
    this.quietFor = busyShare < QUIET_CPU_SHARE ? this.quietFor + intervalMs : 0;
    if (this.quietFor < this.options.quietMs) return false;
    const before = this.heapUsed();
    if (before - this.usedAfterLast < GROWTH_BYTES) return false;
    this.collect ??= garbageCollector();
    this.collect();
    this.usedAfterLast = this.heapUsed();
    // The collection's own CPU time is not work to wait out.
    this.lastCpu = this.cpuMicros();
    this.quietFor = 0;
    this.options.onCollected?.(before, this.usedAfterLast);
    return true;
  }
}

function cpuMicrosOfProcess(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * V8's full collection. `--expose-gc` may be set at run time: the function is then found in a new
 * context (the flag only adds it to contexts created after it), so the process needs no start flag.
 */
function garbageCollector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
