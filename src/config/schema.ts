import type { HealthPolicy } from '../gateway/health.js';

/** A Redis to connect to; keyPrefix namespaces the keys, e.g. per deployment sharing one Redis. */
const redisConnection = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1 },
    keyPrefix: { type: 'string', default: 'searchgate' },
  },
} as const;

/** The deployment's configuration, validated with ajv at startup. Every key is listed in README.md. */
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    server: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        host: { type: 'string', default: '0.0.0.0' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
        requestTimeoutMs: { type: 'integer', minimum: 1, default: 20_000 },
        maxBodyBytes: { type: 'integer', minimum: 1, default: 1_048_576 },
        shutdownGraceMs: { type: 'integer', minimum: 0, default: 10_000 },
        /** A new connection that sends nothing for this long before its first request is closed. */
        firstRequestTimeoutMs: { type: 'integer', minimum: 1, default: 10_000 },
        /** Each request's headers must be in within this, from its first byte. */
        headersTimeoutMs: { type: 'integer', minimum: 1, default: 15_000 },
        /** Each request must be in whole, headers and body, within this (408 past it). */
        bodyTimeoutMs: { type: 'integer', minimum: 1, default: 25_000 },
        /** An idle keep-alive connection is closed after this. */
        keepAliveTimeoutMs: { type: 'integer', minimum: 1, default: 20_000 },
        /** Request line and headers together (431 past it). */
        maxHeaderBytes: { type: 'integer', minimum: 1024, default: 16_384 },
        /** Open connections served; past it only health checks and metrics are (src/server/connections.ts). */
        maxConnections: { type: 'integer', minimum: 1, default: 1_024 },
        /** Quiet this long after work, the process runs one full garbage collection (src/server/idle-collector.ts); 0: never. */
        idleCollectMs: { type: 'integer', minimum: 0, default: 10_000 },
      },
    },
    logging: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: { level: { enum: ['debug', 'info', 'warn', 'error', 'silent'], default: 'info' } },
    },
    auth: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        keys: {
          type: 'array',
          default: [],
          items: {
            type: 'object',
            required: ['key'],
            additionalProperties: false,
            properties: {
              name: { type: 'string', default: 'default' },
              key: { type: 'string', pattern: '^[^\\s]{8,}$' },
            },
          },
        },
      },
    },
    retry: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        retries: { type: 'integer', minimum: 0, maximum: 10, default: 2 },
        minDelayMs: { type: 'integer', minimum: 0, default: 100 },
        maxDelayMs: { type: 'integer', minimum: 0, default: 2_000 },
        maxRetryAfterMs: { type: 'integer', minimum: 0, default: 10_000 },
      },
    },
    providers: {
      type: 'object',
      default: {},
      additionalProperties: {
        type: 'object',
        required: ['type'],
        properties: { type: { type: 'string' } },
      },
    },
    search: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        chain: { type: 'array', items: { type: 'string' }, default: ['local'] },
        /** fallback: the first provider of the chain that answers; fusion: all of them at once, merged. */
        mode: { enum: ['fallback', 'fusion'], default: 'fallback' },
        fusion: {
          type: 'object',
          default: {},
          additionalProperties: false,
          properties: {
            /** How long the fan-out waits for its providers; those not done by then are left out. */
            timeoutMs: { type: 'integer', minimum: 1, default: 6_000 },
            /** The k of reciprocal rank fusion: higher flattens the advantage of top ranks. */
            k: { type: 'number', minimum: 0, default: 60 },
            /** Per-provider weights of their RRF contributions (default 1). */
            weights: { type: 'object', default: {}, additionalProperties: { type: 'number', minimum: 0 } },
            /** Rerank the fused union with search.rerank.model before the cut to count. */
            rerank: { type: 'boolean', default: false },
          },
        },
        overFetchFactor: { type: 'number', minimum: 1, maximum: 10, default: 2 },
        maxPagesPerRequest: { type: 'integer', minimum: 1, maximum: 20, default: 5 },
        rerank: {
          type: 'object',
          default: {},
          additionalProperties: false,
          properties: {
            /** A rerank model id, or null to keep every provider's own order. */
            model: { type: ['string', 'null'], minLength: 1, default: 'service-reranker-v1' },
            /** Search providers whose results are reranked, unless they scored them themselves (the local index does once it holds vectors). */
            providers: { type: 'array', items: { type: 'string' }, default: ['local'] },
            /** Results fetched and scored before the cut to count. */
            candidates: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
            /** Longest the reranking may take; past it the provider's order stands. */
            timeBudgetMs: { type: 'integer', minimum: 1, default: 3_000 },
          },
        },
      },
    },
    health: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        failureThreshold: { type: 'integer', minimum: 1, default: 5 },
        errorRateThreshold: { type: 'number', exclusiveMinimum: 0, maximum: 1, default: 0.5 },
        minimumCalls: { type: 'integer', minimum: 1, default: 20 },
        windowMs: { type: 'integer', minimum: 1, default: 60_000 },
        openMs: { type: 'integer', minimum: 1, default: 30_000 },
        maxOpenMs: { type: 'integer', minimum: 1, default: 300_000 },
        rateLimitedPauseMs: { type: 'integer', minimum: 0, default: 5_000 },
        quotaPauseMs: { type: 'integer', minimum: 0, default: 900_000 },
      },
    },
    content: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        chain: { type: 'array', items: { type: 'string' }, default: ['local'] },
        timeBudgetMs: { type: 'integer', minimum: 1, default: 5_000 },
        concurrency: { type: 'integer', minimum: 1, default: 8 },
      },
    },
    rerank: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        defaultModel: { type: 'string', minLength: 1 },
        maxDocuments: { type: 'integer', minimum: 1, default: 1000 },
        models: {
          type: 'object',
          default: {},
          additionalProperties: {
            type: 'object',
            required: ['chain'],
            additionalProperties: false,
            properties: { chain: { type: 'array', minItems: 1, items: { type: 'string' } } },
          },
        },
      },
    },
    cache: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean', default: true },
        maxBytes: { type: 'integer', minimum: 0, default: 67_108_864 },
        /** memory: each replica its own; redis: shared by the replicas, with the memory cache in front of it. */
        backend: { enum: ['memory', 'redis'], default: 'memory' },
        redis: {
          ...redisConnection,
          properties: {
            ...redisConnection.properties,
            /** Past it a Redis call counts as failed and the request goes on without it. */
            timeoutMs: { type: 'integer', minimum: 1, default: 50 },
            /** A larger answer is kept in the replica's memory cache only. */
            maxValueBytes: { type: 'integer', minimum: 1, default: 1_048_576 },
          },
        },
        ttlSeconds: {
          type: 'object',
          default: {},
          additionalProperties: false,
          properties: {
            noLimit: { type: 'integer', minimum: 0, default: 3600 },
            oneYear: { type: 'integer', minimum: 0, default: 3600 },
            oneMonth: { type: 'integer', minimum: 0, default: 1800 },
            oneWeek: { type: 'integer', minimum: 0, default: 600 },
            oneDay: { type: 'integer', minimum: 0, default: 300 },
            pastDates: { type: 'integer', minimum: 0, default: 86_400 },
            recentDates: { type: 'integer', minimum: 0, default: 300 },
            rerank: { type: 'integer', minimum: 0, default: 3600 },
            /** Page text of the content operation (Tavily extract, Exa contents), per page. */
            content: { type: 'integer', minimum: 0, default: 3600 },
          },
        },
      },
    },
    accounts: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        store: { enum: ['embedded', 'postgres'], default: 'embedded' },
        embedded: {
          type: 'object',
          default: {},
          additionalProperties: false,
          properties: {
            path: { type: 'string', minLength: 1, default: 'data/searchgate.db' },
            synchronous: { enum: ['full', 'normal'], default: 'full' },
          },
        },
        postgres: {
          type: 'object',
          default: {},
          additionalProperties: false,
          properties: {
            url: { type: 'string', default: 'postgres://127.0.0.1:5432/searchgate' },
            poolSize: { type: 'integer', minimum: 1, default: 10 },
            schema: { type: 'string', pattern: '^[a-z_][a-z0-9_]*$' },
          },
        },
        redis: redisConnection,
        defaults: {
          type: 'object',
          default: {},
          additionalProperties: false,
          properties: {
            dailyAllowance: { type: 'integer', minimum: 0, default: 1000 },
            ratePerSecond: { type: 'integer', minimum: 0, default: 1 },
            ratePerMinute: { type: 'integer', minimum: 0, default: 60 },
          },
        },
        weights: {
          type: 'object',
          default: {},
          additionalProperties: false,
          properties: {
            webSearch: { type: 'integer', minimum: 0, default: 1 },
            rerank: { type: 'integer', minimum: 0, default: 1 },
            /** Page text for given URLs (Tavily extract, Exa contents), per request. */
            content: { type: 'integer', minimum: 0, default: 1 },
          },
        },
        touchIntervalSeconds: { type: 'integer', minimum: 0, default: 60 },
      },
    },
    dialects: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        /**
         * Rerank model names clients may send, each mapped to a model under rerank.models (or to
         * service-reranker-v1). Cohere's, Jina's and Voyage's published names already mean the default
         * model; an entry here maps one of them, or any other name, elsewhere.
         */
        rerankAliases: { type: 'object', default: {}, additionalProperties: { type: 'string', minLength: 1 } },
        tavily: {
          type: 'object',
          default: {},
          additionalProperties: false,
          properties: {
            /** Cap on raw_content per result, in code points: Tavily itself has none. */
            rawContentMaxCharacters: { type: 'integer', minimum: 1, default: 100_000 },
          },
        },
      },
    },
    mcp: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean', default: true },
        path: { type: 'string', pattern: '^/[A-Za-z0-9/_-]*$', default: '/mcp' },
        toolTimeoutMs: { type: 'integer', minimum: 1, default: 4000 },
      },
    },
    dashboard: {
      type: 'object',
      default: {},
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean', default: true },
        sessionHours: { type: 'number', exclusiveMinimum: 0, default: 12 },
        /** Off only for plain-HTTP deployments on a host other than localhost: browsers drop Secure cookies there. */
        secureCookies: { type: 'boolean', default: true },
      },
    },
  },
} as const;

export interface ProviderConfig {
  type: string;
  [option: string]: unknown;
}

export interface RedisCacheConfig {
  url: string;
  keyPrefix: string;
  timeoutMs: number;
  maxValueBytes: number;
}

export interface GatewayConfig {
  server: {
    host: string;
    port: number;
    requestTimeoutMs: number;
    maxBodyBytes: number;
    shutdownGraceMs: number;
    firstRequestTimeoutMs: number;
    headersTimeoutMs: number;
    bodyTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxHeaderBytes: number;
    maxConnections: number;
    idleCollectMs: number;
  };
  logging: { level: 'debug' | 'info' | 'warn' | 'error' | 'silent' };
  auth: { keys: Array<{ name: string; key: string }> };
  retry: { retries: number; minDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number };
  providers: Record<string, ProviderConfig>;
  search: {
    chain: string[];
    mode: 'fallback' | 'fusion';
    fusion: { timeoutMs: number; k: number; weights: Record<string, number>; rerank: boolean };
    overFetchFactor: number;
    maxPagesPerRequest: number;
    rerank: { model: string | null; providers: string[]; candidates: number; timeBudgetMs: number };
  };
  health: HealthPolicy;
  content: { chain: string[]; timeBudgetMs: number; concurrency: number };
  rerank: { defaultModel?: string; maxDocuments: number; models: Record<string, { chain: string[] }> };
  cache: {
    enabled: boolean;
    maxBytes: number;
    backend: 'memory' | 'redis';
    redis?: RedisCacheConfig;
    ttlSeconds: {
      noLimit: number;
      oneYear: number;
      oneMonth: number;
      oneWeek: number;
      oneDay: number;
      pastDates: number;
      recentDates: number;
      rerank: number;
      content: number;
    };
  };
  accounts: {
    store: 'embedded' | 'postgres';
    embedded: { path: string; synchronous: 'full' | 'normal' };
    postgres: { url: string; poolSize: number; schema?: string };
    redis?: { url: string; keyPrefix: string };
    defaults: { dailyAllowance: number; ratePerSecond: number; ratePerMinute: number };
    weights: { webSearch: number; rerank: number; content: number };
    touchIntervalSeconds: number;
  };
  dialects: { rerankAliases: Record<string, string>; tavily: { rawContentMaxCharacters: number } };
  mcp: { enabled: boolean; path: string; toolTimeoutMs: number };
  dashboard: { enabled: boolean; sessionHours: number; secureCookies: boolean };
}
