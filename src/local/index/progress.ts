/**
 * How a bulk write reports itself: on a terminal, one status line redrawn in place (pages done,
 * pages/s, the share of the input done and the time left, the process's memory); anywhere else (a log file,
 * CI), one plain line every `intervalMs`, which greps well.
 */
import type { Writable } from 'node:stream';
import type { WriterCounters } from './writer.js';

export interface WriteProgress {
  /** The writer's counters moved; `share` is how much of the input is read (0–1), when known. */
  update(counters: Readonly<WriterCounters>, share?: number | null): void;
  notice(message: string): void;
  finish(counters: Readonly<WriterCounters>, complete: boolean): void;
}

const REDRAW_INTERVAL_MS = 250;

export function createWriteProgress(
  stream: Writable & { isTTY?: boolean },
  options: { tty?: boolean; intervalMs?: number; now?: () => number } = {},
): WriteProgress {
  const tty = options.tty ?? Boolean(stream.isTTY);
  const interval = tty ? REDRAW_INTERVAL_MS : (options.intervalMs ?? 30_000);
  const now = options.now ?? (() => performance.now());
  const started = now();
  let lastDrawn = 0;
  let shown = false;
  let share: number | null = null;

  // Rates and the time left count pages done (written or unchanged): the input is read up to two
  // batches ahead of them, and embedding those takes minutes.
  const status = (counters: Readonly<WriterCounters>) => {
    const seconds = Math.max((now() - started) / 1000, 0.001);
    const done = counters.written + counters.unchanged;
    const rate = done / seconds;
    const parts = [
      `${done.toLocaleString('en')} pages`,
      `${rate.toFixed(0)} pages/s`,
      `${counters.written.toLocaleString('en')} written`,
      `${counters.unchanged.toLocaleString('en')} unchanged`,
    ];
    // An input of no pages (every line bad, or empty) has no share to show.
    if (share !== null && share > 0 && counters.received > 0) {
      const expected = counters.received / Math.min(share, 1);
      parts.push(`${((done / expected) * 100).toFixed(1)}%`, `ETA ${duration(rate > 0 ? (expected - done) / rate : Number.POSITIVE_INFINITY)}`);
    }
    parts.push(`RSS ${(process.memoryUsage.rss() / 1_048_576).toFixed(0)} MiB`);
    return `index: ${parts.join(', ')}`;
  };
  const clear = () => {
    if (tty && shown) stream.write('\r\x1b[K');
    shown = false;
  };
  const draw = (counters: Readonly<WriterCounters>) => {
    clear();
    stream.write(tty ? status(counters) : `${status(counters)}\n`);
    shown = tty;
    lastDrawn = now();
  };
  return {
    update(counters, inputShare) {
      if (inputShare !== undefined) share = inputShare;
      if (now() - lastDrawn >= interval) draw(counters);
    },
    notice(message) {
      clear();
      stream.write(`${message}\n`);
    },
    finish(counters, complete) {
      draw(counters);
      if (tty) stream.write('\n');
      shown = false;
      stream.write(
        `index: ${counters.written} pages written (${counters.embedded} with vectors), ${counters.unchanged} unchanged, ` +
          `${counters.folds} fold${counters.folds === 1 ? '' : 's'}; embedding ${duration(counters.embedMs / 1000)}, ` +
          `folding ${duration(counters.foldMs / 1000)}${complete ? '' : ' (interrupted: run again to continue)'}\n`,
      );
    },
  };
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole}s`;
  const minutes = Math.floor(whole / 60);
  return minutes < 60 ? `${minutes}m${String(whole % 60).padStart(2, '0')}s` : `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
