/**
 * The content hashes an `index add` run has seen, to store each text once across its files. A
 * Set of the 64-character hex strings costs about 110 bytes a page (1.1 GB for a run of 10M pages);
 * this keeps the first 128 bits of each SHA-256 digest in one open-addressed table of 16-byte slots,
 * between a quarter and half full: 32 to 64 bytes a page (320-640 MB for 10M). Two different texts
 * share their first 128 bits with a probability of about n² / 2¹²⁹ (3·10⁻²⁵ for 10M pages).
 */
import { createHash } from 'node:crypto';

const WORDS_PER_SLOT = 4;
const HEX_DIGEST = /^[0-9a-f]{64}$/;

export class DigestSet {
  /** WORDS_PER_SLOT words per slot; a slot of zeros is empty (a digest of zeros is kept apart). */
  private slots: Uint32Array;
  private mask: number;
  private count = 0;
  private hasZeroDigest = false;

  constructor(initialSlots = 1 << 14) {
    const slots = 2 ** Math.ceil(Math.log2(Math.max(16, initialSlots)));
    this.slots = new Uint32Array(slots * WORDS_PER_SLOT);
    this.mask = slots - 1;
  }

  get size(): number {
    return this.count + (this.hasZeroDigest ? 1 : 0);
  }

  /** Adds a content hash; false if it was already in. */
  add(hash: string): boolean {
    const words = digestWords(hash);
    if (isZero(words)) {
      const added = !this.hasZeroDigest;
      this.hasZeroDigest = true;
      return added;
    }
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const slot = this.find(words);
    if (!this.isEmpty(slot)) return false;
    this.slots.set(words, slot * WORDS_PER_SLOT);
    this.count += 1;
    return true;
  }

  has(hash: string): boolean {
    const words = digestWords(hash);
    return isZero(words) ? this.hasZeroDigest : !this.isEmpty(this.find(words));
  }

  /** The slot holding these words, or the empty slot where they would go (linear probing). */
  private find(words: Uint32Array): number {
    // The digest's words are uniformly distributed already: its first word places it.
    for (let slot = words[0]! & this.mask; ; slot = (slot + 1) & this.mask) {
      const at = slot * WORDS_PER_SLOT;
      if (this.isEmpty(slot)) return slot;
      if (this.slots[at] === words[0] && this.slots[at + 1] === words[1] && this.slots[at + 2] === words[2] && this.slots[at + 3] === words[3]) return slot;
    }
  }

  private isEmpty(slot: number): boolean {
    const at = slot * WORDS_PER_SLOT;
    return (this.slots[at]! | this.slots[at + 1]! | this.slots[at + 2]! | this.slots[at + 3]!) === 0;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    this.mask = this.slots.length / WORDS_PER_SLOT - 1;
    for (let at = 0; at < old.length; at += WORDS_PER_SLOT) {
      const words = old.subarray(at, at + WORDS_PER_SLOT);
      if (!isZero(words)) this.slots.set(words, this.find(words) * WORDS_PER_SLOT);
    }
  }
}

/**
 * The first 128 bits of a hex SHA-256 digest. Any other string is hashed first, behind a NUL, so
 * that it never stands for the digest it hashes to (the empty string is not the digest of "").
 */
function digestWords(hash: string): Uint32Array {
  const hex = HEX_DIGEST.test(hash) ? hash : createHash('sha256').update(`\0${hash}`).digest('hex');
  const words = new Uint32Array(WORDS_PER_SLOT);
  for (let word = 0; word < WORDS_PER_SLOT; word++) words[word] = Number.parseInt(hex.slice(word * 8, word * 8 + 8), 16);
  return words;
}

function isZero(words: Uint32Array): boolean {
  return (words[0]! | words[1]! | words[2]! | words[3]!) === 0;
}
