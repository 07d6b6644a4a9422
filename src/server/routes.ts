/**
 * The routes. Every API route, /v1's and each vendor dialect's, reads top-down in one handler:
 * take the key → validate → authenticate → allowance → cache → provider chain → normalize → respond.
 * A dialect (src/dialects, src/vendors/<vendor>/dialect.ts) only says where its key is, how to read
 * its request and how to write its answer.
 */
import Router, { type Layer } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import compose from 'koa-compose';
import { JsonText } from '../api/envelopes.js';
import { badRequest } from '../api/errors.js';
import { authenticateCredential, takeKey } from '../dialects/keys.js';
import type { Dialect, DialectInput, DialectRoute, DialectTools, Served } from '../dialects/types.js';
import type { RerankRequest, WebSearchRequest } from '../api/validate.js';
import type { ContentRequest } from '../gateway/content.js';
import type { MirrorStatus } from '../local/index/mirror.js';
import type { Principal } from '../state/keys.js';
import { contentOperation, rerankOperation, webSearchOperation, type Answered, type OperationContext } from './operations.js';
import type { Services } from './services.js';
import { namePrincipal, originOf, requestBody, type RequestState } from './middleware.js';

export function createRouter(services: Services): Router {
  const { config, search, rerank, metrics } = services;
  const router = new Router();
  const tools: DialectTools = {
    validator: services.validator,
    now: services.now,
    resolveRerankModel: (model) => rerank.resolveModel(model),
    settings: {
      maxRerankDocuments: config.rerank.maxDocuments,
      tavilyRawContentMaxCharacters: config.dialects.tavily.rawContentMaxCharacters,
      contentTimeBudgetMs: config.content.timeBudgetMs,
    },
  };

  for (const dialect of services.dialects) {
    for (const route of dialect.routes) {
      const handler = (ctx: Context) => serve(ctx, services, tools, dialect, route);
      for (const method of route.methods) {
        // Only a POST has a body to read: a GET's Content-Type means nothing (litellm's Brave client sends one).
        const body = method === 'POST' ? requestBody(config.server.maxBodyBytes, route.bodyTypes ?? ['json']) : [];
        router.register(route.path, [method], [...body, handler]);
      }
    }
  }

  router.get('/v1/openapi.json', (ctx) => {
    ctx.body = services.openApi;
  });
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', (ctx) => {
    const health = providerHealthReport(services);
    const replicas = services.indexReplicas();
    // A copy that lost its store still serves its last version; one that never got a version cannot.
    for (const replica of replicas) if (replica.version === null || replica.lastError !== null) health.degraded.push(`index:${replica.location}`);
    // Degraded is still 200: pulling every replica out of the balancer because one shared upstream is
    // down would turn a partial outage (cache hits, other operations) into a full one.
    const status = services.draining ? 'draining' : health.degraded.length ? 'degraded' : 'ready';
    ctx.status = services.draining ? 503 : 200;
    ctx.body = {
      status,
      ...(health.degraded.length ? { degraded: health.degraded } : {}),
      search: search.chain.map((provider) => provider.name),
      searchMode: config.search.mode,
      content: services.content.chain.map((provider) => provider.name),
      rerank: rerank.modelIds,
      providers: health.providers,
      ...(replicas.length ? { indexReplicas: replicas.map(replicaReport) } : {}),
    };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}

/**
 * The router's middleware, with its parameterless routes also found by exact method and path.
 * @koa/router tests every route's pattern and composes the matched route's middleware anew on each
 * request (koa-compose flattens the list every time): 7% of a cache hit's CPU in the profile
 * (docs/benchmarks.md, "Gateway overhead"). A request whose method and path are exactly a
 * parameterless route's runs that route's middleware, composed once, with the context the router
 * would give it. Any other request (a path with a key in it, another letter case, a trailing slash,
 * an unknown path or method) goes to the router as before.
 */
export function routesOf(router: Router): Middleware {
  const routed = router.routes() as unknown as Middleware;
  const exact = new Map<string, Map<string, ExactRoute>>();
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string' || layer.paramNames.length > 0) continue;
    for (const method of layer.methods) {
      // Only where the router itself would run this route's middleware and no other's.
      const match = router.match(layer.path, method);
      if (match.pathAndMethod.length !== 1 || match.pathAndMethod[0] !== layer) continue;
      const byMethod = exact.get(layer.path) ?? new Map<string, ExactRoute>();
      byMethod.set(method, { layer, matched: match.path, run: compose(layer.stack as unknown as Middleware[]) });
      exact.set(layer.path, byMethod);
    }
  }
  return function exactRoute(ctx, next) {
    const route = exact.get(ctx.path)?.get(ctx.method);
    if (route === undefined) return routed(ctx, next);
    // What @koa/router's dispatch sets for a matched route without parameters.
    const { layer } = route;
    const context = ctx as Context & Record<string, unknown>;
    context.matched = [...route.matched];
    context.router = router;
    context.routeMatched = true;
    context.captures = [];
    context.params = (ctx.request as typeof ctx.request & { params: object }).params = {};
    context.routerPath = layer.path;
    context.routerName = layer.name || undefined;
    context._matchedRoute = layer.path;
    if (layer.name) context._matchedRouteName = layer.name;
    return route.run(ctx, next);
  };
}

interface ExactRoute {
  layer: Layer;
  /** The layers whose path matches, whatever their method (the router's ctx.matched). */
  matched: Layer[];
  run: (ctx: Context, next: Next) => Promise<unknown>;
}

/** One request to one route of a dialect, from its key to its answer. */
async function serve(ctx: Context, services: Services, tools: DialectTools, dialect: Dialect, route: DialectRoute) {
  const state = ctx.state as RequestState;
  state.dialect = route.label ?? dialect.name;
  const received = performance.now();
  const parts = requestParts(ctx);
  // A key in the body or the query string is taken out before the reader, the cache or a log sees it.
  const credential = takeKey(parts, dialect.keys);
  const { request, echo } = (route as ErasedRoute).read(parts, tools);
  const principal = await authenticateCredential(services.authenticator, credential, dialect.keys, dialect.keyHint);
  namePrincipal(ctx, principal);
  const answer = await operate(services, route, request, {
    principal,
    timeoutMs: services.config.server.requestTimeoutMs,
    // Set when charged, so that a failure after it carries them too.
    onCharged: (headers, windows) => ctx.set(dialect.rateLimitHeaders?.(headers, windows) ?? headers),
  });
  state.cacheStatus = answer.cacheStatus;
  state.provider = answer.outcome.provider;
  ctx.set('X-Cache', answer.cacheStatus);
  const body = (route as ErasedRoute).render({
    request,
    echo,
    outcome: answer.outcome,
    logId: state.logId,
    units: answer.units,
    elapsedMs: performance.now() - received,
    origin: originOf(ctx),
    nowMs: services.now(),
  });
  answerWith(ctx, body);
}

/** A rendered answer as the body: Koa serializes an object; text serialized already goes as it is. */
function answerWith(ctx: Context, body: unknown) {
  if (body instanceof JsonText) {
    // The Content-Type Koa gives a JSON body (set first: Koa would call a string text/plain).
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    ctx.body = body.text;
  } else {
    ctx.body = body;
  }
}

/** A route as the handler sees it: whatever its reader returns, its renderer takes. */
interface ErasedRoute {
  read(input: DialectInput, tools: DialectTools): { request: unknown; echo: unknown };
  render(served: Served<unknown, { provider: string }, unknown>): unknown;
}

/** What a dialect reads of a request, and the path parameters a key may be in. */
function requestParts(ctx: Context): DialectInput & { params: Record<string, string> } {
  return {
    method: ctx.method,
    header: (name: string) => ctx.get(name) || undefined,
    // Koa parses the query string on first use: a request without one needs none parsed.
    query: ctx.querystring ? { ...ctx.query } : {},
    body: bodyObject(ctx.request.body),
    params: (ctx as { params?: Record<string, string> }).params ?? {},
  };
}

/** The route's operation: allowance → cache → provider chain (src/server/operations.ts). */
function operate(services: Services, route: DialectRoute, request: unknown, context: OperationContext): Promise<Answered<{ provider: string }>> {
  switch (route.operation) {
    case 'search':
      return webSearchOperation(services, request as WebSearchRequest, context);
    case 'content':
      return contentOperation(services, request as ContentRequest, context);
    case 'rerank':
      return rerankOperation(services, request as RerankRequest, context);
  }
}

/** The body's fields; {} without a body. A JSON body that is not an object (an array) is no request. */
function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined) return {};
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('request body must be a JSON object');
  return { ...(body as Record<string, unknown>) };
}

/** A replica's copy of an object-store index as /readyz shows it: its version, how old, and whether the store answers. */
function replicaReport(replica: MirrorStatus) {
  const secondsSince = (ms: number | null) => (ms === null ? null : Math.round((Date.now() - ms) / 100) / 10);
  return {
    location: replica.location,
    version: replica.version,
    versionAgeSeconds: secondsSince(replica.versionCommittedAtMs),
    syncedSecondsAgo: secondsSince(replica.syncedAtMs),
    storeReachable: replica.lastError === null && replica.syncedAtMs !== null,
    syncs: replica.syncs,
    bytesCopied: replica.bytesCopied,
  };
}

/**
 * Each provider's health for /readyz: circuit state, whether and for how long it is skipped, recent
 * failures. Only failure kinds and statuses are shown, never upstream messages: /readyz is open to
 * anyone who can reach the port. An operation whose every provider is skipped makes the gateway
 * "degraded".
 */
function providerHealthReport(services: Services) {
  const snapshots = services.health.snapshots();
  const available = (operation: string, name: string) =>
    snapshots.find((snapshot) => snapshot.operation === operation && snapshot.provider === name)?.unavailable == null;
  const degraded: string[] = [];
  const searchChain = services.search.chain.map((provider) => provider.name);
  if (searchChain.length && !searchChain.some((name) => available('search', name))) degraded.push('search');
  for (const model of services.rerank.modelIds) {
    const { chain } = services.rerank.resolveModel(model);
    if (!chain.some((provider) => available('rerank', provider.name))) degraded.push(`rerank:${model}`);
  }
  return {
    degraded,
    providers: snapshots.map((snapshot) => ({
      provider: snapshot.provider,
      operation: snapshot.operation,
      state: snapshot.state,
      available: snapshot.unavailable === null,
      ...(snapshot.unavailable
        ? { unavailable: { reason: snapshot.unavailable.reason, retryInSeconds: Math.ceil(snapshot.unavailable.retryAfterMs / 1000) } }
        : {}),
      consecutiveFailures: snapshot.consecutiveFailures,
      errorRate: snapshot.errorRate,
      callsInWindow: snapshot.callsInWindow,
      timesOpened: snapshot.opened,
      lastFailure: snapshot.lastFailure,
    })),
  };
}
