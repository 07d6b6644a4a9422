/**
 * The response cache's shared tier, in Redis: an answer one replica loaded is a hit on every other.
 * Redis only saves upstream calls here, it is never needed to answer: a call that fails or overruns
 * cache.redis.timeoutMs reads as a miss (or a write not made), counts in
 * searchgate_cache_backend_errors_total, and the request goes on with the replica's memory cache.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { RedisCacheConfig } from '../config/schema.js';
import type { Logger } from '../server/logger.js';
import type { Metrics } from '../server/metrics.js';
import { closeRedis } from './redis.js';

/** An answer read from the shared tier: the value, its size as JSON, and how long it has left to live. */
export interface SharedEntry {
  value: unknown;
  bytes: number;
  ttlMs: number;
}

/** The tier behind a replica's memory cache. Never throws: a failure reads as a miss. */
export interface SharedCacheTier {
  read(cache: string, key: string): Promise<SharedEntry | null>;
  /** Fire and forget: the request that loaded the answer does not wait for it to be stored. */
  write(cache: string, key: string, json: string, ttlMs: number): void;
}

/** How long a starting gateway waits for Redis before it serves without it (it keeps trying in the background). */
const CONNECT_WAIT_MS = 2000;
/** Reconnect attempts back off up to this: a cache should be back within a second of Redis. */
const MAX_RECONNECT_DELAY_MS = 1000;
/**
 * A connection with commands outstanding and nothing read for this long is dropped and made anew,
 * so that a Redis that stopped answering does not collect timed-out commands without end.
 */
const SILENT_CONNECTION_MS = 2000;
/** At most one warning per interval, however many requests meet the outage. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

export class RedisCacheTier implements SharedCacheTier {
  private readonly redis: Redis;
  private readonly keyPrefix: string;
  private lastWarning = -Infinity;
  private failuresSinceWarning = 0;

  constructor(
    private readonly options: RedisCacheConfig,
    configVersion: string,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {
    // The config's answer fingerprint is in the prefix: replicas share entries only while their
    // providers, chains and TTLs agree, and one generation's keys can be listed or dropped by pattern.
    this.keyPrefix = `${options.keyPrefix}:cache:${configVersion}:`;
    this.redis = new Redis(options.url, {
      lazyConnect: true,
      // With the offline queue a command waits, unbounded, for the reconnect; without it, it fails at once.
      enableOfflineQueue: false,
      commandTimeout: options.timeoutMs,
      // The ready check (INFO) would run under commandTimeout too, and on a busy host could drop each
      // connection in turn; a Redis still loading its data answers LOADING, which reads as a miss anyway.
      enableReadyCheck: false,
      socketTimeout: Math.max(SILENT_CONNECTION_MS, options.timeoutMs),
      retryStrategy: (attempt) => Math.min(attempt * 100, MAX_RECONNECT_DELAY_MS),
    });
    this.redis.on('error', (error: Error) => this.warn('connection', error));
  }

  /** Connects before the first request, so that it finds Redis ready; gives up waiting, not trying, after a while. */
  async connect(): Promise<void> {
    await Promise.race([this.redis.connect().catch((error: Error) => this.warn('connect', error)), delay(CONNECT_WAIT_MS)]);
  }

  async read(cache: string, key: string): Promise<SharedEntry | null> {
    const redisKey = this.keyPrefix + cache + ':' + key;
    try {
      const replies = (await this.redis.pipeline().get(redisKey).pttl(redisKey).exec())!;
      for (const [error] of replies) if (error) throw error;
      const [[, json], [, ttlMs]] = replies as [[null, string | null], [null, number]];
      // PTTL is -2 when the entry expired between the two commands.
      if (json === null || ttlMs <= 0) return null;
      return { value: JSON.parse(json), bytes: Buffer.byteLength(json), ttlMs };
    } catch (error) {
      this.failed(cache, 'get', error as Error);
      return null;
    }
  }

  write(cache: string, key: string, json: string, ttlMs: number): void {
    if (Buffer.byteLength(json) > this.options.maxValueBytes) return;
    this.redis.set(this.keyPrefix + cache + ':' + key, json, 'PX', ttlMs).catch((error: Error) => this.failed(cache, 'set', error));
  }

  close(): Promise<void> {
    return closeRedis(this.redis);
  }

  private failed(cache: string, operation: 'get' | 'set', error: Error) {
    this.metrics.cacheBackendErrors.inc({ cache, operation });
    this.warn(operation, error);
  }

  private warn(operation: string, error: Error) {
    const now = Date.now();
    if (now - this.lastWarning < FAILURE_LOG_INTERVAL_MS) {
      this.failuresSinceWarning++;
      return;
    }
    this.logger.warn('shared cache unavailable: answering with the local cache', {
      operation,
      reason: error.message,
      failuresSinceLastWarning: this.failuresSinceWarning,
    });
    this.lastWarning = now;
    this.failuresSinceWarning = 0;
  }
}
