/** The composition root: builds every service a gateway instance needs from its config. */
import { openApiDocument, type DialectDocs } from '../api/openapi.js';
import { RequestValidator, createAjv } from '../api/validate.js';
import type { ResolvedConfig } from '../config/load.js';
import { ContentFiller } from '../gateway/content.js';
import { RerankGateway, type RerankOutcome } from '../gateway/rerank.js';
import type { PageResult } from '../gateway/content.js';
import { SearchGateway, type SearchOutcome } from '../gateway/search.js';
import { HealthRegistry } from '../gateway/health.js';
import { UpstreamCaller } from '../gateway/upstream.js';
import { builtInDialects, builtInProviderTypes, type ProviderType } from '../vendors/registry.js';
import { langsearchDialect } from '../dialects/langsearch.js';
import { ErrorScopes } from '../dialects/scopes.js';
import type { Dialect, ErrorScope } from '../dialects/types.js';
import type { MirrorStatus } from '../local/index/mirror.js';
import type { ContentProvider, RerankProvider, SearchProvider } from '../providers/types.js';
import { AccountService } from '../state/accounts.js';
import { AccountLedger, type AllowanceLedger } from '../state/allowance.js';
import { GatewayAuthenticator, StaticKeyAuthenticator, type Authenticator } from '../state/keys.js';
import { accountPolicy, openAccountState, openSharedCacheTier } from '../state/open.js';
import { ResponseCache } from '../state/responseCache.js';
import type { Logger } from './logger.js';
import { createMetrics, registerHealthMetrics, registerIndexReplicaMetrics, registerModelMetrics, type Metrics } from './metrics.js';

export interface ServiceOptions {
  config: ResolvedConfig;
  logger: Logger;
  providerTypes?: Record<string, ProviderType>;
  dialects?: readonly Dialect[];
  now?: () => number;
}

export interface Services {
  config: ResolvedConfig;
  logger: Logger;
  metrics: Metrics;
  validator: RequestValidator;
  accounts: AccountService;
  authenticator: Authenticator;
  ledger: AllowanceLedger;
  search: SearchGateway;
  content: ContentFiller;
  rerank: RerankGateway;
  searchCache: ResponseCache<SearchOutcome>;
  rerankCache: ResponseCache<RerankOutcome>;
  /** Pages of the content operation, one entry per page and cap. */
  contentCache: ResponseCache<PageResult>;
  health: HealthRegistry;
  /** searchgate's own API and every vendor's it answers. */
  dialects: readonly Dialect[];
  /** Whose error shape each path answers in; `others` are the scopes that are no dialect (MCP). */
  errorScopes(others: readonly ErrorScope[]): ErrorScopes;
  openApi: object;
  now: () => number;
  draining: boolean;
  /** The copies of object-store indexes this gateway serves, one per location, with how current each is. */
  indexReplicas(): MirrorStatus[];
  /** Loads what providers need before the first request (the local reranker's model). */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** What the OpenAPI document says of each vendor dialect (/v1's own routes are described in full already). */
function dialectDocs(dialects: readonly Dialect[]): DialectDocs[] {
  return dialects
    .filter((dialect) => dialect !== langsearchDialect)
    .map((dialect) => ({
      name: dialect.name,
      keys: dialect.keys,
      routes: dialect.routes.map((route) => ({
        methods: route.methods,
        path: route.path,
        summary: route.docs?.summary ?? `${dialect.name}: ${route.operation}`,
        ...(route.docs?.parameters ? { parameters: route.docs.parameters } : {}),
        ...(route.docs?.body ? { body: route.docs.body } : {}),
        ...(route.docs?.response ? { response: route.docs.response } : {}),
      })),
    }));
}

export function createServices({
  config,
  logger,
  providerTypes = builtInProviderTypes,
  dialects: vendorDialects = builtInDialects,
  now = Date.now,
}: ServiceOptions): Services {
  const dialects = [langsearchDialect, ...vendorDialects];
  const metrics = createMetrics();
  const health = new HealthRegistry(config.health, now, (provider, operation, state) => {
    metrics.circuitTransitions.inc({ provider, operation, state });
    logger.warn('provider circuit changed', { provider, operation, state });
  });
  const upstream = new UpstreamCaller(config.retry, metrics, logger, health);

  // One instance per provider and operation, shared by every chain that names it.
  const built = new Map<string, unknown>();
  function provider<T>(name: string, operation: 'search' | 'content' | 'rerank'): T {
    const key = `${operation}:${name}`;
    if (!built.has(key)) {
      const options = config.providers[name]!;
      built.set(key, providerTypes[options.type]![operation]!(name, options));
    }
    return built.get(key) as T;
  }

  const rerankModels = new Map(
    Object.entries(config.rerank.models).map(([model, { chain }]) => [
      model,
      chain.map((name) => provider<RerankProvider>(name, 'rerank')),
    ]),
  );
  const rerank = new RerankGateway(rerankModels, config.rerank.defaultModel, upstream, logger, {
    configured: config.dialects.rerankAliases,
    vendorNames: dialects.flatMap((dialect) => dialect.rerankModels ?? []),
  });
  registerModelMetrics(metrics, () =>
    [...built.values()].flatMap((instance) => (instance as Partial<RerankProvider>).telemetry?.() ?? []),
  );
  const content = new ContentFiller(
    config.content.chain.map((name) => provider<ContentProvider>(name, 'content')),
    config.content,
    upstream,
    logger,
  );
  const search = new SearchGateway(
    config.search.chain.map((name) => provider<SearchProvider>(name, 'search')),
    content,
    config.search,
    upstream,
    logger,
    now,
    (model, query, documents, deadline) => rerank.score(model, query, documents, deadline),
  );
  const { store, windows } = openAccountState(config.accounts);
  const accounts = new AccountService(
    store,
    windows,
    accountPolicy(config.accounts),
    now,
    (error) => logger.warn('recording a key\'s last use failed', { error: (error as Error).message }),
  );

  const sharedCache = openSharedCacheTier(config, metrics, logger);

  const limits = { maxDocuments: config.rerank.maxDocuments };
  // Every provider a chain names is tracked from the start, so /readyz and /metrics list it before its first call.
  for (const provider of search.chain) health.of(provider.name, 'search');
  for (const provider of content.chain) health.of(provider.name, 'content');
  for (const chain of rerankModels.values()) for (const provider of chain) health.of(provider.name, 'rerank');
  registerHealthMetrics(metrics, () => health.snapshots());
  const indexReplicas = (): MirrorStatus[] => {
    const byLocation = new Map<string, MirrorStatus>();
    for (const instance of search.chain) {
      const replica = instance.indexReplica?.();
      if (replica) byLocation.set(replica.location, replica);
    }
    return [...byLocation.values()];
  };
  registerIndexReplicaMetrics(metrics, indexReplicas);

  return {
    config,
    logger,
    metrics,
    validator: new RequestValidator(createAjv(), limits),
    accounts,
    authenticator: new GatewayAuthenticator(new StaticKeyAuthenticator(config.auth.keys), accounts),
    ledger: new AccountLedger(accounts, metrics),
    search,
    content,
    rerank,
    searchCache: new ResponseCache('search', config.cache, metrics, sharedCache),
    rerankCache: new ResponseCache('rerank', config.cache, metrics, sharedCache),
    contentCache: new ResponseCache('content', config.cache, metrics, sharedCache),
    health,
    dialects,
    errorScopes: (others) => new ErrorScopes(dialects, others),
    openApi: openApiDocument(limits, dialectDocs(dialects)),
    now,
    draining: false,
    indexReplicas,
    async start() {
      await Promise.all([store.migrate(), sharedCache?.connect()]);
      for (const instance of built.values()) await (instance as Partial<RerankProvider>).start?.(logger);
    },
    async close() {
      await Promise.allSettled([...built.values()].map((instance) => (instance as Partial<RerankProvider>).close?.()));
      await accounts.flush();
      await Promise.allSettled([windows.close(), store.close(), sharedCache?.close()]);
    },
  };
}
