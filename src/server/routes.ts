/**
 * The routes. Each operation reads top-down: validate → authenticate → allowance → cache →
 * provider chain → normalize → respond.
 */
import { createHash } from 'node:crypto';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import type { Context } from 'koa';
import { rerankEnvelope, webSearchEnvelope } from '../api/envelopes.js';
import type { WebSearchRequest, RerankRequest } from '../api/validate.js';
import { Deadline } from '../gateway/deadline.js';
import type { Services } from './services.js';
import { requireJsonBody, type RequestState } from './middleware.js';

export function createRouter(services: Services): Router {
  const { config, validator, authenticator, ledger, searchCache, rerankCache, search, rerank, metrics } = services;
  const router = new Router();
  const jsonBody = [
    requireJsonBody,
    bodyParser({ enableTypes: ['json'], jsonLimit: String(config.server.maxBodyBytes), strict: true }),
  ];

  router.post('/v1/web-search', ...jsonBody, async (ctx: Context) => {
    const state = ctx.state as RequestState;
    const request = validator.parseWebSearch(ctx.request.body);
    const principal = await authenticator.authenticate(ctx.get('authorization') || undefined);
    state.keyName = principal.keyName;
    await ledger.consume(principal, 'web-search');
    const deadline = new Deadline(config.server.requestTimeoutMs);
    const { value: outcome, status } = await searchCache
      .getOrLoad(
        () => searchCacheKey(request, services),
        searchTtlMs(request, services),
        () => search.search(request, deadline),
      )
      .finally(() => deadline.dispose());
    state.cacheStatus = status;
    state.provider = outcome.provider;
    ctx.set('X-Cache', status);
    ctx.body = webSearchEnvelope(state.logId, request.query, outcome, `${ctx.protocol}://${ctx.host}/v1/`);
  });

  router.post('/v1/rerank', ...jsonBody, async (ctx: Context) => {
    const state = ctx.state as RequestState;
    const request = validator.parseRerank(ctx.request.body);
    rerank.resolveModel(request.model);
    const principal = await authenticator.authenticate(ctx.get('authorization') || undefined);
    state.keyName = principal.keyName;
    await ledger.consume(principal, 'rerank');
    const deadline = new Deadline(config.server.requestTimeoutMs);
    const { value: outcome, status } = await rerankCache
      .getOrLoad(
        () => rerankCacheKey(request, services),
        config.cache.ttlSeconds.rerank * 1000,
        () => rerank.rerank(request, deadline),
      )
      .finally(() => deadline.dispose());
    state.cacheStatus = status;
    state.provider = outcome.provider;
    ctx.set('X-Cache', status);
    ctx.body = rerankEnvelope(state.logId, request, outcome);
  });

  router.get('/v1/openapi.json', (ctx) => {
    ctx.body = services.openApi;
  });
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', (ctx) => {
    const health = providerHealthReport(services);
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
    };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

function searchCacheKey(request: WebSearchRequest, services: Services): string {
  return sha256(
    JSON.stringify([
      services.config.version,
      request.query,
      request.count,
      request.freshness.raw,
      [...request.includeDomains].sort(),
      [...request.excludeDomains].sort(),
      request.text?.maxCharacters ?? null,
      request.summary,
      request.language,
    ]),
  );
}

const DAY_MS = 86_400_000;

/** Fresher filters go stale sooner; a date range wholly in the past barely changes. */
function searchTtlMs(request: WebSearchRequest, services: Services): number {
  const ttl = services.config.cache.ttlSeconds;
  const freshness = request.freshness;
  const seconds =
    freshness.kind === 'none'
      ? ttl.noLimit
      : freshness.kind === 'preset'
        ? ttl[freshness.preset]
        : freshness.toMs <= services.now() - DAY_MS
          ? ttl.pastDates
          : ttl.recentDates;
  return seconds * 1000;
}

function rerankCacheKey(request: RerankRequest, services: Services): string {
  const hash = createHash('sha256').update(services.config.version).update('\0').update(request.model).update('\0');
  hash.update(request.query);
  // Length-prefixed so that no two different document lists hash the same stream.
  for (const document of request.documents) hash.update(`\0${document.length}\0`).update(document);
  return hash.digest('base64url');
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
