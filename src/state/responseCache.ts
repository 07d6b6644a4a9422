/**
 * The response cache: bounded in bytes (lru-cache), a TTL per entry, and single-flight — concurrent
 * identical requests share one provider call. Failures are never cached.
 */
import { LRUCache } from 'lru-cache';
import type { Metrics } from '../server/metrics.js';

export type CacheStatus = 'HIT' | 'MISS' | 'COALESCED' | 'BYPASS';

export class ResponseCache<V extends object> {
  private readonly entries: LRUCache<string, V> | null;
  private readonly inFlight = new Map<string, Promise<V>>();

  constructor(
    private readonly name: string,
    options: { enabled: boolean; maxBytes: number },
    private readonly metrics: Metrics,
  ) {
    this.entries =
      options.enabled && options.maxBytes > 0
        ? new LRUCache<string, V>({
            maxSize: options.maxBytes,
            sizeCalculation: (value) => Math.max(1, Buffer.byteLength(JSON.stringify(value))),
            // A value larger than the whole cache is simply not kept.
            maxEntrySize: options.maxBytes,
            ttlAutopurge: false,
            dispose: () => this.updateGauges(),
          })
        : null;
  }

  /** `key` is a function so that a disabled cache never pays for computing one. */
  async getOrLoad(cacheKey: () => string, ttlMs: number, load: () => Promise<V>): Promise<{ value: V; status: CacheStatus }> {
    if (this.entries === null) return { value: await load(), status: 'BYPASS' };
    const key = cacheKey();
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.metrics.cacheHits.inc({ cache: this.name });
      return { value: cached, status: 'HIT' };
    }
    const pending = this.inFlight.get(key);
    if (pending) {
      this.metrics.cacheHits.inc({ cache: this.name });
      return { value: await pending, status: 'COALESCED' };
    }
    this.metrics.cacheMisses.inc({ cache: this.name });
    const loading = load();
    this.inFlight.set(key, loading);
    try {
      const value = await loading;
      if (ttlMs > 0) this.entries.set(key, value, { ttl: ttlMs });
      this.updateGauges();
      return { value, status: 'MISS' };
    } finally {
      this.inFlight.delete(key);
    }
  }

  private updateGauges() {
    if (!this.entries) return;
    this.metrics.cacheSize.set({ cache: this.name }, this.entries.calculatedSize);
    this.metrics.cacheEntries.set({ cache: this.name }, this.entries.size);
  }
}
