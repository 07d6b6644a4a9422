/**
 * A Bloom filter of the URLs an index holds, so that a writer looks up in the index only the pages
 * that may already be there. Looking every page up would cost a scan of the rows appended since the
 * last fold for each batch (LanceDB filters unindexed rows one by one), which grows with the run;
 * a fresh page, the common case, answers "no" here in a microsecond and is never looked up.
 *
 * A "maybe" is checked against the index, so a false positive costs one lookup, never a wrong answer.
 * Ten bits per URL and seven hashes give about 1% false positives; 10 million URLs take 12 MB.
 */
import { createHash } from 'node:crypto';

const BITS_PER_ENTRY = 10;
const HASHES = 7;

export class UrlFilter {
  private readonly bits: Uint32Array;
  private readonly size: number;

  constructor(expectedEntries: number) {
    this.size = Math.max(1024, Math.ceil(expectedEntries * BITS_PER_ENTRY));
    this.bits = new Uint32Array(Math.ceil(this.size / 32));
  }

  add(url: string): void {
    for (const position of this.positions(url)) this.bits[position >>> 5]! |= 1 << (position & 31);
  }

  /** False when the URL was never added; true when it probably was. */
  mayContain(url: string): boolean {
    for (const position of this.positions(url)) if ((this.bits[position >>> 5]! & (1 << (position & 31))) === 0) return false;
    return true;
  }

  /** Kirsch–Mitzenmacher: k positions from two independent hashes, h1 + i·h2. */
  private *positions(url: string): Generator<number> {
    const digest = createHash('sha1').update(url).digest();
    const first = digest.readUInt32LE(0);
    const second = digest.readUInt32LE(4) | 1;
    for (let i = 0; i < HASHES; i++) yield ((first + Math.imul(i, second)) >>> 0) % this.size;
  }
}
