/**
 * The routes. Each operation reads top-down: validate → authenticate → allowance → cache →
 * provider chain → normalize → respond.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { rerankEnvelope, webSearchEnvelope } from '../api/envelopes.js';
import type { Principal } from '../state/keys.js';
import { rerankOperation, webSearchOperation, type OperationContext } from './operations.js';
import type { Services } from './services.js';
import { authenticateRequest, jsonBody, type RequestState } from './middleware.js';

export function createRouter(services: Services): Router {
  const { config, validator, authenticator, search, rerank, metrics } = services;
  const router = new Router();
  const body = jsonBody(config.server.maxBodyBytes);

  router.post('/v1/web-search', ...body, async (ctx: Context) => {
    const request = validator.parseWebSearch(ctx.request.body);
    const principal = await authenticateRequest(ctx, authenticator);
    const { outcome, cacheStatus } = await webSearchOperation(services, request, httpContext(ctx, principal, config.server.requestTimeoutMs));
    answered(ctx, cacheStatus, outcome.provider);
    ctx.body = webSearchEnvelope((ctx.state as RequestState).logId, request.query, outcome, `${ctx.protocol}://${ctx.host}/v1/`);
  });

  router.post('/v1/rerank', ...body, async (ctx: Context) => {
    const request = validator.parseRerank(ctx.request.body);
    rerank.resolveModel(request.model);
    const principal = await authenticateRequest(ctx, authenticator);
    const { outcome, cacheStatus } = await rerankOperation(services, request, httpContext(ctx, principal, config.server.requestTimeoutMs));
    answered(ctx, cacheStatus, outcome.provider);
    ctx.body = rerankEnvelope((ctx.state as RequestState).logId, request, outcome);
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

const httpContext = (ctx: Context, principal: Principal, timeoutMs: number): OperationContext => ({
  principal,
  timeoutMs,
  onCharged: (headers) => ctx.set(headers),
});

function answered(ctx: Context, cacheStatus: string, provider: string) {
  const state = ctx.state as RequestState;
  state.cacheStatus = cacheStatus;
  state.provider = provider;
  ctx.set('X-Cache', cacheStatus);
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
