/**
 * What the memory benchmarks (fuzz.ts, soak.ts) share: a small local index made with the embedded
 * model, the embedded-default gateway in a child process (this build's or another's), its RSS
 * sampled from /proc, a few of its own gauges read from /metrics, and the machine's load.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { processMemory } from './index-bench-common.js';

/** This build's dist/. */
export const THIS_DIST = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CHILD = join(THIS_DIST, 'bench', 'gateway-child.js');
export const MIB = 2 ** 20;
export const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;

/**
 * An index of `pages` pages with their vectors, written by `searchgate index add` (this build's) with
 * the embedded model, as an operator would fill it.
 */
export function buildIndex(directory: string, model: string, pages: number): string {
  const topics = ['capital of France', 'potassium in bananas', 'river Seine', 'Lyon cuisine', 'HTTP semantics', 'TypeScript strict mode'];
  const lines = Array.from({ length: pages }, (_, i) => {
    const topic = topics[i % topics.length]!;
    return JSON.stringify({
      url: `https://site${i % 40}.example/page/${i}`,
      title: `${topic} ${i}`,
      text: `${topic} page ${i}: ${'words about the topic and related matters. '.repeat(20 + (i % 30))}`,
      datePublished: `2025-0${(i % 9) + 1}-1${i % 10}T08:00:00Z`,
    });
  });
  mkdirSync(directory, { recursive: true });
  const source = join(directory, 'pages.jsonl');
  writeFileSync(source, `${lines.join('\n')}\n`);
  const index = join(directory, 'index');
  execFileSync(process.execPath, [join(THIS_DIST, 'src/cli/main.js'), 'index', 'add', source, '--dir', index, '--model', model], { stdio: ['ignore', 'ignore', 'inherit'] });
  return index;
}

export interface GatewayProcessOptions {
  /** The dist/ directory of the build to run. */
  dist: string;
  /** The raw config (the embedded default plus what the run sets). */
  config: Record<string, unknown>;
  /** Added to this process's environment (MALLOC_ARENA_MAX=2, …). */
  env?: Record<string, string>;
  /** Node options of the gateway (`--max-semi-space-size=16`, …). */
  nodeOptions?: string[];
  /**
   * Through the build's `bin/searchgate-node`, with the process settings `searchgate` runs under
   * (default), or under plain `node` (`false`, and for a build that has no launcher).
   */
  launcher?: boolean;
}

export interface GatewayProcess {
  pid: number;
  url: string;
  /** Distinct "unhandled error" messages the gateway logged, with their counts. */
  unhandled: Map<string, number>;
  stop(): Promise<void>;
}

/** The embedded default for a benchmark: the local index and model, one operator key, its own account store. */
export function embeddedDefaultConfig(options: { key: string; index: string; model: string; stateDirectory: string }): Record<string, unknown> {
  return {
    auth: { keys: [{ name: 'bench', key: options.key }] },
    logging: { level: 'warn' },
    providers: {
      local: { type: 'local', directory: options.index, vectorModel: options.model },
      'local-reranker': { type: 'local-reranker', model: options.model },
    },
    accounts: { embedded: { path: join(options.stateDirectory, 'accounts.db'), synchronous: 'normal' } },
  };
}

/** How a build starts Node: its launcher where it has one and it is wanted, else plain `node`. */
export function nodeCommand(dist: string, launcher = true): { command: string; launched: boolean } {
  const script = resolve(dist, '..', 'bin', 'searchgate-node');
  return launcher && existsSync(script) ? { command: script, launched: true } : { command: process.execPath, launched: false };
}

export async function startGatewayProcess(options: GatewayProcessOptions): Promise<GatewayProcess> {
  const { command } = nodeCommand(options.dist, options.launcher);
  const child = spawn(command, [...(options.nodeOptions ?? []), CHILD, options.dist, JSON.stringify(options.config)], {
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const unhandled = new Map<string, number>();
  createInterface({ input: child.stderr! }).on('line', (line) => {
    if (!line.includes('unhandled error')) return;
    let message = line;
    try {
      message = (JSON.parse(line) as { error?: string }).error ?? line;
    } catch {
      // not a JSON log line: counted as it is
    }
    unhandled.set(message, (unhandled.get(message) ?? 0) + 1);
  });
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error('the gateway did not start within 120 s')), 120_000);
    child.once('exit', (code) => reject(new Error(`the gateway exited (code ${code}) before it served`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolvePort(Number(match[1]));
    });
  });
  return {
    pid: child.pid!,
    url: `http://127.0.0.1:${port}`,
    unhandled,
    stop: () =>
      new Promise<void>((resolveStop) => {
        if (child.exitCode !== null) return resolveStop();
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolveStop();
        });
        child.stdin!.end();
      }),
  };
}

export interface RssSample {
  /** Seconds since sampling began. */
  s: number;
  rssMiB: number;
}

/** The gateway's RSS every `everyMs`, and the kernel's high-water mark (which sees between samples). */
export function sampleRss(pid: number, everyMs: number) {
  const started = performance.now();
  const series: RssSample[] = [];
  const take = () => {
    const memory = processMemory(pid);
    if (memory) series.push({ s: Math.round((performance.now() - started) / 100) / 10, rssMiB: mib(memory.rss) });
    return memory;
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    series,
    now: () => mib(take()?.rss ?? 0),
    highWaterMiB: () => mib(processMemory(pid)?.peak ?? 0),
    stop: () => clearInterval(timer),
  };
}

/** A few of the gateway's own gauges: where the memory is, as far as Node and the caches know. */
export async function memoryGauges(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const gauges: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^(nodejs_heap_size_used_bytes|nodejs_heap_size_total_bytes|nodejs_external_memory_bytes|searchgate_cache_size_bytes|searchgate_local_reranker_cache_bytes)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match) gauges[`${match[1]}${match[2] ?? ''}`] = mib(Number(match[3]));
  }
  return gauges;
}

/** The 1-, 5- and 15-minute load averages, as /proc/loadavg gives them. */
export function loadAverage(): number[] {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  } catch {
    return [];
  }
}

export const sleep = (ms: number) => new Promise((resolveSleep) => setTimeout(resolveSleep, ms));

/**
 * Where a process's resident memory is, from /proc/<pid>/smaps, in MiB: malloc's main heap (brk),
 * anonymous mappings (V8 heaps, other malloc arenas, ONNX Runtime's buffers), and file mappings
 * (the code of Node and of native modules); with how many anonymous mappings hold more than 32 MiB.
 */
export function memoryMap(pid: number): Record<string, number> | null {
  let smaps: string;
  try {
    smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return null;
  }
  const totals = { heap: 0, anonymous: 0, files: 0, other: 0, largeAnonymousMappings: 0 };
  let name = '';
  for (const line of smaps.split('\n')) {
    const mapping = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (mapping) {
      name = mapping[1]!;
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (!rss) continue;
    const bytes = Number(rss[1]) * 1024;
    if (name === '[heap]') totals.heap += bytes;
    else if (name === '') {
      totals.anonymous += bytes;
      if (bytes > 32 * MIB) totals.largeAnonymousMappings++;
    } else if (name.startsWith('/')) totals.files += bytes;
    else totals.other += bytes;
  }
  return { heap: mib(totals.heap), anonymous: mib(totals.anonymous), files: mib(totals.files), other: mib(totals.other), largeAnonymousMappings: totals.largeAnonymousMappings };
}

/** Ends a run: its work folder removed, the report written as JSON to `out`. */
export function finishRun(work: string, out: string, report: object): void {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 1)}\n`);
  console.log(`wrote ${out}`);
}
