/**
 * `searchgate extract` over many pages: files, directories and URLs in, one JSON line per page out,
 * in input order, extracted by an ExtractorPool so every core works.
 *
 * Memory stays bounded whatever the batch's size: inputs are listed lazily (a directory one level
 * at a time), and at most `inFlight` pages are read, fetched, extracted or waiting for their turn
 * to be written at once. Writing in input order costs a little parallelism when one page is slow
 * (the pages behind it wait in the window), and buys output that two runs can diff line by line.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { ExtractorPool } from '../local/extract/pool.js';
import type { FetchPolicy } from '../local/fetch/policy.js';
import { StatusLine } from '../util/status-line.js';
import { fetchSource, isDirectoryTarget, isHttpTarget, pageFilesUnder, readSource, type ListedPath } from './extract-source.js';
import { optimiseLaterForBatch } from './tiering.js';

export interface BatchOptions {
  workers: number;
  /** Also render each page's main text as markdown (its line's `markdown`). */
  markdown?: boolean;
  fetchPolicy: FetchPolicy;
  /** The page address of a single local file (resolves its relative links and dates in its path). */
  pageUrl?: string;
  /** stdout: one JSON line per page. */
  output: Writable;
  /** stderr: the progress line (a terminal only) and the closing summary. */
  log: Writable & { isTTY?: boolean };
}

export interface BatchSummary {
  pages: number;
  /** Pages with an error line: unreadable, not fetched, or the extractor failed. */
  failed: number;
  /** Read and extracted, but no main text (challenge pages included). */
  withoutText: number;
  /** Pages cut short by the extractor's time limit (they come out without text). */
  timeouts: number;
  /** Why the batch stopped early: its output was closed (`| head`) or failed. Null when it ran to the end. */
  outputError: string | null;
}

/** Enough pages in flight to keep every worker busy while others are read, fetched or written. */
const IN_FLIGHT_PER_WORKER = 4;

/** Each command-line input, a directory standing for the page files under it. */
async function* expandInputs(inputs: readonly string[]): AsyncGenerator<ListedPath> {
  for (const input of inputs) {
    if (await isDirectoryTarget(input)) yield* pageFilesUnder(input);
    else yield { path: input };
  }
}

export async function runBatch(inputs: readonly string[], options: BatchOptions): Promise<BatchSummary> {
  optimiseLaterForBatch();
  const pool = new ExtractorPool({ size: options.workers });
  const summary: BatchSummary = { pages: 0, failed: 0, withoutText: 0, timeouts: 0, outputError: null };
  const started = performance.now();
  const status = () => {
    const seconds = Math.max((performance.now() - started) / 1000, 0.001);
    return `extract: ${summary.pages} pages, ${(summary.pages / seconds).toFixed(1)} pages/s, ${summary.failed} failed, ${summary.withoutText} without text`;
  };
  const progress = options.log.isTTY ? new StatusLine(options.log) : null;

  /** Never rejects: whatever goes wrong with one page becomes that page's line. */
  const extractOne = async ({ path: input, error: listingError }: ListedPath): Promise<Record<string, unknown>> => {
    if (listingError !== undefined) return { input, error: listingError };
    try {
      const source = isHttpTarget(input) ? await fetchSource(input, options.fetchPolicy) : await readSource(input, options.pageUrl);
      const page = await pool.extract(source.bytes, { url: source.url, contentType: source.contentType }, { markdown: options.markdown ?? false });
      return { input, url: source.url, ...page };
    } catch (error) {
      return { input, error: (error as Error).message };
    }
  };

  // A reader that goes away (`| head -1`: EPIPE) ends the batch: nobody would read the rest. Without
  // a listener the error would kill the process with a stack trace.
  const outputFailed = new Promise<void>((resolve) => {
    options.output.on('error', (error: Error) => {
      summary.outputError ??= error.message;
      resolve();
    });
  });

  const write = async (line: Record<string, unknown>) => {
    if (summary.outputError !== null) return;
    summary.pages += 1;
    if ('error' in line) summary.failed += 1;
    else if (!line.text) summary.withoutText += 1;
    if (!options.output.write(`${JSON.stringify(line)}\n`)) await Promise.race([once(options.output, 'drain'), outputFailed]);
    progress?.draw(status());
  };

  const window: Promise<Record<string, unknown>>[] = [];
  const inFlight = options.workers * IN_FLIGHT_PER_WORKER;
  // The loop running dry mid-batch would be a bug (Node then exits 13 with no summary); say where
  // the batch stood, so that the report shows it.
  const ranDry = () => {
    progress?.clear();
    options.log.write(`extract: internal error: nothing left to wait for with ${window.length} pages unfinished (${pool.describe()})\n`);
  };
  process.once('beforeExit', ranDry);
  try {
    for await (const input of expandInputs(inputs)) {
      if (summary.outputError !== null) break;
      window.push(extractOne(input));
      if (window.length >= inFlight) await write(await window.shift()!);
    }
    while (window.length > 0) await write(await window.shift()!);
  } finally {
    summary.timeouts = pool.timeouts;
    await pool.close();
    process.off('beforeExit', ranDry);
  }

  const seconds = (performance.now() - started) / 1000;
  // The process's CPU time, worker threads included: on a shared machine it says what the batch
  // cost when the wall time says mostly how busy the machine was.
  const cpu = process.cpuUsage();
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const timeouts = summary.timeouts > 0 ? `, ${summary.timeouts} over the time limit` : '';
  const stopped = summary.outputError === null ? '' : `; stopped, the output failed: ${summary.outputError}`;
  const closing = `${status()}${timeouts} in ${seconds.toFixed(1)} s (${cpuSeconds.toFixed(1)} s of CPU)${stopped}`;
  if (progress) progress.finish(closing);
  else options.log.write(`${closing}\n`);
  return summary;
}
