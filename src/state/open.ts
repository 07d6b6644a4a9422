/**
 * Opens the account state the deployment configures: the embedded SQLite file with in-memory rate
 * windows (one instance), or PostgreSQL with rate windows in Redis when configured, else in Postgres
 * (several replicas).
 */
import type { GatewayConfig } from '../config/schema.js';
import type { AccountPolicy } from './accounts.js';
import { EmbeddedStore, MemoryRateWindows } from './embedded.js';
import { PostgresRateWindows, PostgresStore } from './postgres.js';
import { RedisRateWindows } from './redis.js';
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
