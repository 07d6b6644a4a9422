/** What `index add` says about a long run: pages done, their rate and the time left, not pages read ahead. */
import { PassThrough } from 'node:stream';
import test from 'ava';
import { createWriteProgress } from '../../../src/local/index/progress.js';
import type { WriterCounters } from '../../../src/local/index/writer.js';

const counters = (values: Partial<WriterCounters>): WriterCounters => ({
  received: 0,
  written: 0,
  unchanged: 0,
  embedded: 0,
  folds: 0,
  embedMs: 0,
  foldMs: 0,
  ...values,
});

/** A progress reporter off a terminal, on a clock the test moves, and what it has written so far. */
function offTerminal() {
  const stream = new PassThrough();
  let output = '';
  stream.on('data', (chunk) => (output += String(chunk)));
  const clock = { now: 0 };
  const progress = createWriteProgress(stream, { tty: false, intervalMs: 1000, now: () => clock.now });
  return { progress, clock, output: () => output };
}

test('off a terminal: a line per interval, with the rate and the time left of pages done, whatever was read ahead', (t) => {
  const { progress, clock, output } = offTerminal();
  clock.now = 10_000;
  // 4,000 pages read (half the input), 1,000 done in 10 s: 100 pages/s, 7,000 to go, 70 s.
  progress.update(counters({ received: 4000, written: 900, unchanged: 100 }), 0.5);
  clock.now = 10_500;
  progress.update(counters({ received: 4000, written: 950, unchanged: 100 }), 0.5);
  const lines = output().trim().split('\n');
  t.is(lines.length, 1, 'a second update within the interval draws nothing');
  t.regex(lines[0]!, /^index: 1,000 pages, 100 pages\/s, 900 written, 100 unchanged, 12\.5%, ETA 1m10s, RSS \d+ MiB$/);

  progress.finish(counters({ received: 8000, written: 7800, unchanged: 200, embedded: 7800, folds: 1, embedMs: 75_000, foldMs: 2_000 }), false);
  t.regex(output(), /index: 7800 pages written \(7800 with vectors\), 200 unchanged, 1 fold; embedding 1m15s, folding 2s \(interrupted: run again to continue\)\n$/);
});

test('an input that gave no page says so without a share or a time left (no NaN%)', (t) => {
  const { progress, clock, output } = offTerminal();
  clock.now = 5_000;
  progress.update(counters({}), 1);
  t.regex(output().trim(), /^index: 0 pages, 0 pages\/s, 0 written, 0 unchanged, RSS \d+ MiB$/);
});
