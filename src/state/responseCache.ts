/**
 * The response cache: bounded in bytes (lru-cache), a TTL per entry, and single-flight — concurrent
 * identical requests share one provider call. Failures are never cached. With a shared tier (Redis,
 * for replicas) the memory cache stays in front of it: a hot answer stays one object per replica,
 * which the /v1 route keeps serialized (webSearchEnvelopeText), and single-flight stays per replica.
 */
import { LRUCache } from 'lru-cache';
import type { Metrics } from '../server/metrics.js';
import type { SharedCacheTier } from './redisCache.js';

export type CacheStatus = 'HIT' | 'MISS' | 'COALESCED' | 'BYPASS';

/** Every cached value is plain JSON data: the shared tier stores it as JSON text. */
export class ResponseCache<V extends object> {
  private readonly entries: LRUCache<string, V> | null;
  private readonly inFlight = new Map<string, Promise<{ value: V; status: 'HIT' | 'MISS' }>>();

  constructor(
    private readonly name: string,
    options: { enabled: boolean; maxBytes: number },
    private readonly metrics: Metrics,
    private readonly shared: SharedCacheTier | null = null,
  ) {
    this.entries =
      options.enabled && options.maxBytes > 0
        ? new LRUCache<string, V>({
            maxSize: options.maxBytes,
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
      return { value: (await pending).value, status: 'COALESCED' };
    }
    // The shared tier's lookup is inside the single flight too: one Redis read per key and replica at a time.
    const loading = this.shared ? this.readSharedOrLoad(this.shared, key, ttlMs, load) : this.loadAndKeep(key, ttlMs, load);
    this.inFlight.set(key, loading);
    try {
      return await loading;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async readSharedOrLoad(shared: SharedCacheTier, key: string, ttlMs: number, load: () => Promise<V>) {
    const entry = await shared.read(this.name, key);
    if (entry === null) return this.loadAndKeep(key, ttlMs, load);
    const value = entry.value as V;
    // Kept here for what it has left to live in Redis, not a full TTL again.
    this.keep(key, value, entry.bytes, entry.ttlMs);
    this.metrics.cacheHits.inc({ cache: this.name });
    return { value, status: 'HIT' as const };
  }

  private async loadAndKeep(key: string, ttlMs: number, load: () => Promise<V>) {
    this.metrics.cacheMisses.inc({ cache: this.name });
    const value = await load();
    if (ttlMs > 0) {
      const json = JSON.stringify(value);
      this.keep(key, value, Buffer.byteLength(json), ttlMs);
      this.shared?.write(this.name, key, json, ttlMs);
    }
    return { value, status: 'MISS' as const };
  }

  private keep(key: string, value: V, bytes: number, ttlMs: number) {
    this.entries!.set(key, value, { ttl: ttlMs, size: bytes });
    this.updateGauges();
  }

  private updateGauges() {
    if (!this.entries) return;
    this.metrics.cacheSize.set({ cache: this.name }, this.entries.calculatedSize);
    this.metrics.cacheEntries.set({ cache: this.name }, this.entries.size);
  }
}
