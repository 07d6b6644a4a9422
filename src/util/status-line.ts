/**
 * One status line redrawn in place on a terminal (a crawl's or a batch's counters). Redraws are
 * throttled: a batch finishes pages far faster than anyone reads, and each redraw is a write.
 */
import type { Writable } from 'node:stream';

const REDRAW_INTERVAL_MS = 200;

export class StatusLine {
  private shown = false;
  /** The first state is always shown, however soon it comes. */
  private lastDrawn = Number.NEGATIVE_INFINITY;

  constructor(private readonly stream: Writable) {}

  /** Shows `text` unless the line was drawn less than a moment ago; `force` draws anyway. */
  draw(text: string, force = false): void {
    if (!force && performance.now() - this.lastDrawn < REDRAW_INTERVAL_MS) return;
    this.clear();
    this.stream.write(text);
    this.shown = true;
    this.lastDrawn = performance.now();
  }

  /** Erases the line, so that a message can be written as a line of its own. */
  clear(): void {
    if (this.shown) this.stream.write('\r\x1b[K');
    this.shown = false;
  }

  /** Leaves `text` (plus `suffix`) on screen and moves to the next line. */
  finish(text: string, suffix = ''): void {
    this.draw(text, true);
    this.stream.write(`${suffix}\n`);
    this.shown = false;
  }
}
