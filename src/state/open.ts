/**
 * Opens the state the deployment configures. Accounts: the embedded SQLite file with in-memory rate
 * windows (one instance), or PostgreSQL with rate windows in Redis when configured, else in Postgres
 * (several replicas). Response cache: in memory, or in memory in front of Redis shared by replicas.
 */
import type { ResolvedConfig } from '../config/load.js';
import type { GatewayConfig } from '../config/schema.js';
import type { Logger } from '../server/logger.js';
import type { Metrics } from '../server/metrics.js';
import type { AccountPolicy } from './accounts.js';
import { EmbeddedStore, MemoryRateWindows } from './embedded.js';
import { PostgresRateWindows, PostgresStore } from './postgres.js';
import { RedisRateWindows } from './redis.js';
import { RedisCacheTier } from './redisCache.js';
import type { AccountStore, RateWindows } from './store.js';

export interface AccountState {
  store: AccountStore;
  windows: RateWindows;
}

export function openAccountState(config: GatewayConfig['accounts']): AccountState {
  if (config.store === 'embedded') {
    return { store: new EmbeddedStore(config.embedded), windows: new MemoryRateWindows() };
  }
  const store = new PostgresStore(config.postgres);
  const windows = config.redis ? new RedisRateWindows(config.redis) : new PostgresRateWindows(store);
  return { store, windows };
}

export function accountPolicy(config: GatewayConfig['accounts']): AccountPolicy {
  return {
    defaults: config.defaults,
    weights: { 'web-search': config.weights.webSearch, rerank: config.weights.rerank, content: config.weights.content },
    touchIntervalMs: config.touchIntervalSeconds * 1000,
  };
}

/** The response caches' shared tier: none for the memory backend (or no cache at all). */
export function openSharedCacheTier(config: ResolvedConfig, metrics: Metrics, logger: Logger): RedisCacheTier | null {
  const { enabled, backend, redis } = config.cache;
  return enabled && backend === 'redis' ? new RedisCacheTier(redis!, config.version, metrics, logger) : null;
}
