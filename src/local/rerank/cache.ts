/**
 * Document embeddings kept for reuse: a bi-encoder's document side does not depend on the query, and
 * the same pages come back across searches and rerank calls. An entry is keyed by the SHA-256 of the
 * model's stamp and the document's text, and holds the vectors of all the document's windows, so a
 * document seen before is neither tokenized nor embedded again. The cache is bounded in bytes (the
 * vectors plus a fixed allowance per entry), least recently used first out.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/** One document's window vectors, packed: `windows` rows of `vectors.length / windows` floats. */
export interface DocumentEmbedding {
  vectors: Float32Array;
  windows: number;
}

/** Key string, entry object and the LRU's own bookkeeping, on top of the vectors' bytes (estimated). */
export const ENTRY_OVERHEAD_BYTES = 256;

/** Default bound: 64 MiB, about 20,000 documents of 250 words for a 384-dimension model. */
export const DEFAULT_EMBEDDING_CACHE_BYTES = 64 * 1024 * 1024;

export function embeddingBytes(embedding: DocumentEmbedding): number {
  return embedding.vectors.byteLength + ENTRY_OVERHEAD_BYTES;
}

export class DocumentEmbeddingCache {
  private readonly entries: LRUCache<string, DocumentEmbedding>;
  /** Documents answered from the cache and those that had to be embedded, with their windows. */
  readonly stats = { hits: 0, misses: 0, hitWindows: 0 };

  /**
   * @param stamp names the model and how it cuts windows (modelStamp in model.ts): vectors of two
   *   stamps never share a key.
   * @param maxBytes bound on the vectors plus ENTRY_OVERHEAD_BYTES per entry; a document bigger than
   *   the whole bound is not kept.
   */
  constructor(
    readonly stamp: string,
    readonly maxBytes: number,
  ) {
    this.entries = new LRUCache({ maxSize: Math.max(1, maxBytes), sizeCalculation: embeddingBytes });
  }

  /** The key of a document's text: SHA-256 of the stamp and the text, hex. */
  key(text: string): string {
    return createHash('sha256').update(this.stamp).update('\0').update(text).digest('hex');
  }

  get(key: string): DocumentEmbedding | undefined {
    const found = this.entries.get(key);
    if (found) {
      this.stats.hits++;
      this.stats.hitWindows += found.windows;
    } else {
      this.stats.misses++;
    }
    return found;
  }

  /** Keeps an embedding; lru-cache refuses one larger than the whole bound (its maxEntrySize is maxSize). */
  set(key: string, embedding: DocumentEmbedding): void {
    this.entries.set(key, embedding);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Entries held. */
  get size(): number {
    return this.entries.size;
  }

  /** Bytes held, as counted against maxBytes. */
  get bytes(): number {
    return this.entries.calculatedSize;
  }
}
