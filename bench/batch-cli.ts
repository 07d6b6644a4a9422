/**
 * One run of the built `searchgate extract` batch CLI over page files, as users run it: a process of
 * its own, its wall time start-up included, its CPU time (worker threads included) read from the
 * summary line it prints.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { round3 } from './index-bench-common.js';

export interface BatchRun {
  workers: number;
  seconds: number;
  pagesPerSecond: number;
  lines: number;
  errorLines: number;
  exitCode: number | null;
  /** Pages the pool cut short at its per-page time limit (from the CLI's summary line). */
  timeouts: number;
  /** The CLI's own CPU time, worker threads included (from its summary line). */
  cpuSeconds: number;
  /** 1-minute load average when the run started and ended: batch runs are minutes apart, and the load moves. */
  loadAverage1m: { before: number; after: number };
  /** Each page's text, by the input path as given. */
  textByPath: Map<string, string>;
  /** Each page's whole line (every field it printed), by the input path. */
  lineByPath: Map<string, string>;
}

export interface BatchRunOptions {
  /** Copy the CLI's stderr (its summary) to this process's stdout. */
  echoStderr?: boolean;
  /** More arguments for `searchgate extract`, such as `--format markdown`. */
  extraArgs?: readonly string[];
}

/** `node CLI extract --jsonl --workers N ...paths`, CLI being a build's `dist/src/cli/main.js`. */
export function runBatchCli(cli: string, paths: string[], workers: number, options: BatchRunOptions = {}): Promise<BatchRun> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const loadBefore = os.loadavg()[0]!;
    const child = spawn(process.execPath, [cli, 'extract', '--jsonl', '--workers', String(workers), ...(options.extraArgs ?? []), ...paths], { stdio: ['ignore', 'pipe', 'pipe'] });
    const textByPath = new Map<string, string>();
    const lineByPath = new Map<string, string>();
    let lines = 0;
    let errorLines = 0;
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const page = JSON.parse(line) as { input: string; text?: string; error?: string };
      lines += 1;
      if (page.error !== undefined) errorLines += 1;
      textByPath.set(page.input, page.text ?? '');
      lineByPath.set(page.input, line);
    });
    child.on('error', reject);
    child.on('close', (exitCode) => {
      const seconds = (performance.now() - started) / 1000;
      if (options.echoStderr) process.stdout.write(stderr);
      const timeouts = Number(/(\d+) over the time limit/.exec(stderr)?.[1] ?? 0);
      const cpuSeconds = Number(/([\d.]+) s of CPU/.exec(stderr)?.[1] ?? Number.NaN);
      const loadAverage1m = { before: round3(loadBefore), after: round3(os.loadavg()[0]!) };
      resolve({ workers, seconds, pagesPerSecond: paths.length / seconds, lines, errorLines, exitCode, timeouts, cpuSeconds, loadAverage1m, textByPath, lineByPath });
    });
  });
}
