/**
 * Prometheus metrics. Each gateway instance owns its registry, so several can live in one process
 * (the tests do) without clashing names.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { HealthSnapshot } from '../gateway/health.js';
import type { MirrorStatus } from '../local/index/mirror.js';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  // prom-client also sums three per-type gauges into *_total gauges, a suffix Prometheus reserves
  // for counters (promtool flags them). The per-type gauges carry the same facts.
  for (const misnamed of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
    registry.removeSingleMetric(misnamed);
  }
  return {
    registry,
    httpRequests: new Counter({
      name: 'searchgate_http_requests_total',
      help: 'HTTP requests answered, by route (its template), method, status code and dialect (langsearch for /v1, the vendor for a vendor dialect, mcp, none).',
      labelNames: ['route', 'method', 'status', 'dialect'] as const,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'searchgate_http_request_duration_seconds',
      help: 'Time from request to response, by route (its template), method, status code and dialect.',
      labelNames: ['route', 'method', 'status', 'dialect'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    inFlight: new Gauge({
      name: 'searchgate_http_requests_in_flight',
      help: 'HTTP requests being served right now.',
      registers,
    }),
    connectionsOpen: new Gauge({
      name: 'searchgate_http_connections_open',
      help: 'Client connections open right now, over server.maxConnections included.',
      registers,
    }),
    connectionsClosed: new Counter({
      name: 'searchgate_connections_closed_total',
      help: 'Client connections closed by a limit, by reason: first_request_timeout, headers_timeout, body_timeout, keep_alive_timeout, headers_too_large, bad_request, body_too_large, unread_body, max_connections.',
      labelNames: ['reason'] as const,
      registers,
    }),
    idleCollections: new Counter({
      name: 'searchgate_idle_collections_total',
      help: 'Full garbage collections run because the process went quiet after work (server.idleCollectMs).',
      registers,
    }),
    upstreamRequests: new Counter({
      name: 'searchgate_upstream_requests_total',
      help: 'Calls to upstream providers (each attempt), by provider, operation and outcome.',
      labelNames: ['provider', 'operation', 'outcome'] as const,
      registers,
    }),
    upstreamDuration: new Histogram({
      name: 'searchgate_upstream_request_duration_seconds',
      help: 'Duration of each upstream attempt, by provider, operation and outcome.',
      labelNames: ['provider', 'operation', 'outcome'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    upstreamRetries: new Counter({
      name: 'searchgate_upstream_retries_total',
      help: 'Upstream attempts that were retried, by provider and operation.',
      labelNames: ['provider', 'operation'] as const,
      registers,
    }),
    upstreamSkipped: new Counter({
      name: 'searchgate_upstream_skipped_total',
      help: 'Calls not made to a provider because its circuit was open, a probe was in flight, or it had paused us (rate limit, quota), by provider, operation and reason.',
      labelNames: ['provider', 'operation', 'reason'] as const,
      registers,
    }),
    mcpToolCalls: new Counter({
      name: 'searchgate_mcp_tool_calls_total',
      help: 'MCP tool calls, by tool and the HTTP status their outcome corresponds to (200, or the error status).',
      labelNames: ['tool', 'status'] as const,
      registers,
    }),
    mcpToolDuration: new Histogram({
      name: 'searchgate_mcp_tool_call_duration_seconds',
      help: 'Time to answer an MCP tool call, by tool.',
      labelNames: ['tool'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    allowanceUnits: new Counter({
      name: 'searchgate_allowance_units_total',
      help: 'Allowance units charged to accounts, and units given back for requests that failed on our side, by operation and outcome (charged, refunded).',
      labelNames: ['operation', 'outcome'] as const,
      registers,
    }),
    allowanceRefusals: new Counter({
      name: 'searchgate_allowance_refusals_total',
      help: 'Account requests refused with 429, by the limit that was hit: second, minute (rate windows) or day (daily allowance).',
      labelNames: ['operation', 'limit'] as const,
      registers,
    }),
    circuitTransitions: new Counter({
      name: 'searchgate_provider_circuit_transitions_total',
      help: 'Circuit breaker state changes, by provider, operation and the state entered.',
      labelNames: ['provider', 'operation', 'state'] as const,
      registers,
    }),
    cacheHits: new Counter({
      name: 'searchgate_cache_hits_total',
      help: 'Requests answered from the response cache (including coalesced ones), by cache.',
      labelNames: ['cache'] as const,
      registers,
    }),
    cacheMisses: new Counter({
      name: 'searchgate_cache_misses_total',
      help: 'Requests that had to call a provider, by cache.',
      labelNames: ['cache'] as const,
      registers,
    }),
    cacheSize: new Gauge({
      name: 'searchgate_cache_size_bytes',
      help: 'Bytes held by the response cache, by cache.',
      labelNames: ['cache'] as const,
      registers,
    }),
    cacheEntries: new Gauge({
      name: 'searchgate_cache_entries',
      help: 'Entries held by the response cache, by cache.',
      labelNames: ['cache'] as const,
      registers,
    }),
    cacheBackendErrors: new Counter({
      name: 'searchgate_cache_backend_errors_total',
      help: 'Calls to the shared cache backend (Redis) that failed or overran cache.redis.timeoutMs, by cache and operation (get, set); the request went on with the local cache.',
      labelNames: ['cache', 'operation'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** What an in-process model reports about its work (the local reranker); read at scrape time. */
export interface ModelTelemetry {
  provider: string;
  queuedDocuments: number;
  dispatches: number;
  documents: number;
  windows: number;
  cachedWindows: number;
}

/**
 * The local reranker's queue and work, read from its own counters at each scrape, so scoring pays
 * nothing for them. The counters only grow while the model is loaded.
 */
export function registerModelMetrics(metrics: Metrics, sources: () => ModelTelemetry[]): void {
  const registers = [metrics.registry];
  const labelNames = ['provider'] as const;
  new Gauge({
    name: 'searchgate_local_reranker_queued_documents',
    help: 'Documents waiting for the local reranker, by provider.',
    labelNames,
    registers,
    collect() {
      this.reset();
      for (const source of sources()) this.set({ provider: source.provider }, source.queuedDocuments);
    },
  });
  const counters: Array<[keyof Omit<ModelTelemetry, 'provider' | 'queuedDocuments'>, string, string]> = [
    ['dispatches', 'searchgate_local_reranker_dispatches_total', 'Batches of requests the local reranker ran, by provider.'],
    ['documents', 'searchgate_local_reranker_documents_total', 'Documents the local reranker scored, by provider.'],
    ['windows', 'searchgate_local_reranker_windows_total', 'Document windows scored (long documents have several), by provider.'],
    ['cachedWindows', 'searchgate_local_reranker_cached_windows_total', 'Document windows whose embedding came from the cache, by provider.'],
  ];
  for (const [field, name, help] of counters) {
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const source of sources()) this.inc({ provider: source.provider }, source[field]);
      },
    });
  }
}

const CIRCUIT_STATES = ['closed', 'half_open', 'open'] as const;

/**
 * Provider health gauges: the circuit state as one series per state (1 for the current one, the usual
 * way to expose an enum), how long until the provider is called again, and the windowed error rate.
 */
export function registerHealthMetrics(metrics: Metrics, readings: () => HealthSnapshot[]): void {
  const registers = [metrics.registry];
  new Gauge({
    name: 'searchgate_provider_circuit_state',
    help: 'Circuit breaker state of each provider and operation: 1 for the current state, 0 for the others.',
    labelNames: ['provider', 'operation', 'state'] as const,
    registers,
    collect() {
      this.reset();
      for (const reading of readings()) {
        for (const state of CIRCUIT_STATES) this.set({ provider: reading.provider, operation: reading.operation, state }, reading.state === state ? 1 : 0);
      }
    },
  });
  new Gauge({
    name: 'searchgate_provider_unavailable_seconds',
    help: 'Seconds until a provider is called again (open circuit, probe in flight, or a rate-limit or quota pause); 0 when it is available.',
    labelNames: ['provider', 'operation'] as const,
    registers,
    collect() {
      this.reset();
      for (const reading of readings()) {
        this.set({ provider: reading.provider, operation: reading.operation }, (reading.unavailable?.retryAfterMs ?? 0) / 1000);
      }
    },
  });
  new Gauge({
    name: 'searchgate_provider_error_ratio',
    help: 'Share of failed calls to a provider in the health window (absent until the window holds enough calls).',
    labelNames: ['provider', 'operation'] as const,
    registers,
    collect() {
      this.reset();
      for (const reading of readings()) {
        if (reading.errorRate !== null) this.set({ provider: reading.provider, operation: reading.operation }, reading.errorRate);
      }
    },
  });
}

/**
 * The copies of object-store indexes a replica serves: how long ago each was last found to match
 * the store (it grows while the store is down or hanging), how old its version is, and the syncs.
 */
export function registerIndexReplicaMetrics(metrics: Metrics, readings: () => MirrorStatus[]): void {
  const registers = [metrics.registry];
  const seconds = (sinceMs: number | null) => (sinceMs === null ? -1 : Math.max(0, (Date.now() - sinceMs) / 1000));
  const perLocation: Array<[name: string, help: string, value: (reading: MirrorStatus) => number]> = [
    [
      'searchgate_index_replica_sync_age_seconds',
      'Seconds since the replica\'s copy of an object-store index was last found to match the store; -1 if it never was since the start.',
      (reading) => seconds(reading.syncedAtMs),
    ],
    [
      'searchgate_index_replica_version_age_seconds',
      'Seconds since the version the replica serves was committed to the store; -1 while it has none.',
      (reading) => seconds(reading.versionCommittedAtMs),
    ],
    ['searchgate_index_replica_version', 'The version of the object-store index the replica serves; -1 while it has none.', (reading) => reading.version ?? -1],
  ];
  for (const [name, help, value] of perLocation) {
    new Gauge({
      name,
      help,
      labelNames: ['location'] as const,
      registers,
      collect() {
        this.reset();
        for (const reading of readings()) this.set({ location: reading.location }, value(reading));
      },
    });
  }
  new Gauge({
    name: 'searchgate_index_replica_syncs',
    help: 'Syncs of the replica\'s copy with the store since the start, by outcome (a counter read from the mirror).',
    labelNames: ['location', 'outcome'] as const,
    registers,
    collect() {
      this.reset();
      for (const reading of readings()) {
        this.set({ location: reading.location, outcome: 'ok' }, reading.syncs.ok);
        this.set({ location: reading.location, outcome: 'failed' }, reading.syncs.failed);
      }
    },
  });
}

export interface CountAndDuration {
  count: { inc(): void };
  duration: { observe(seconds: number): void };
}

/**
 * A counter and a histogram with the same labels, resolved once per label combination: prom-client
 * would otherwise hash the label object on every call. Label values must come from bounded sets.
 */
export function seriesCache<L extends string>(
  counter: Counter<L>,
  histogram: Histogram<L>,
): (labels: Record<L, string>) => CountAndDuration {
  const cache = new Map<string, CountAndDuration>();
  return (labels) => {
    const key = Object.values(labels).join('\u0000');
    let series = cache.get(key);
    if (!series) {
      series = { count: counter.labels(labels), duration: histogram.labels(labels) };
      cache.set(key, series);
    }
    return series;
  };
}
