/**
 * The middleware every request passes through: a fresh log_id, the in-flight gauge, the request
 * metrics and log line, and the one place where any failure becomes an error body: the spec's, or
 * the vendor's on a dialect's paths.
 */
import { randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import { ApiError, errorKind } from '../api/errors.js';
import type { ErrorScopes, PathScope } from '../dialects/scopes.js';
import { servedRoutes } from '../dialects/errors.js';
import type { Authenticator, Principal } from '../state/keys.js';
import type { Logger } from './logger.js';
import { readBody, type BodyType } from './body.js';
import { seriesCache, type Metrics } from './metrics.js';

export interface RequestState {
  logId: string;
  /** Whose error shape this path answers in. */
  scope: PathScope;
  /** The `dialect` label, when the route's differs from its scope's (root /v1/rerank is LangSearch's). */
  dialect?: string;
  cacheStatus?: string;
  provider?: string;
  keyName?: string;
  account?: string;
}

/**
 * A log id: 32 hex digits, 128 random bits (a UUID without its dashes had 122). Cut from random
 * bytes drawn 128 ids at a time, which costs a fraction of a randomUUID() and its dashes taken out.
 */
export function newLogId(): string {
  if (logIdOffset === logIdPool.length) {
    logIdPool = randomBytes(LOG_IDS_PER_DRAW * 16).toString('hex');
    logIdOffset = 0;
  }
  const id = logIdPool.slice(logIdOffset, logIdOffset + 32);
  logIdOffset += 32;
  return id;
}

const LOG_IDS_PER_DRAW = 128;
let logIdPool = '';
let logIdOffset = 0;

export function requestLifecycle(metrics: Metrics, logger: Logger, scopes: ErrorScopes) {
  const requestSeries = seriesCache(metrics.httpRequests, metrics.httpDuration);
  return async function lifecycle(ctx: Context, next: Next) {
    const state = ctx.state as RequestState;
    state.logId = newLogId();
    state.scope = scopes.of(ctx.path);
    ctx.set('X-Log-Id', state.logId);
    const started = performance.now();
    metrics.inFlight.inc();
    let failure: ApiError | undefined;
    try {
      await next();
      if (ctx.body == null && ctx.status >= 400) throw unansweredRoute(ctx, state.scope);
    } catch (error) {
      failure = toApiError(error, logger, state.logId);
      respondWithError(ctx, failure, state);
    } finally {
      metrics.inFlight.dec();
      const durationSeconds = (performance.now() - started) / 1000;
      const route = routeTemplate(ctx);
      const dialect = state.dialect ?? state.scope.scope.name;
      const series = requestSeries({ route, method: ctx.method, status: String(ctx.status), dialect });
      series.count.inc();
      series.duration.observe(durationSeconds);
      if (logger.enabled('info')) logger.info('request', {
        log_id: state.logId,
        method: ctx.method,
        // Never the raw path or query: a key may ride in either (SearXNG's path segment, Google's key=).
        path: state.scope.scope.redactPath?.(ctx.path) ?? ctx.path,
        query: ctx.querystring ? redactQuery(ctx.querystring) : undefined,
        route,
        dialect,
        status: ctx.status,
        duration_ms: logMilliseconds(durationSeconds),
        // Unset fields are undefined, which the JSON log line leaves out.
        cache: state.cacheStatus,
        provider: state.provider,
        key: state.keyName,
        account: state.account,
        error: failure?.message,
      });
    }
  };
}

/** The failure in the shape of the path's scope, with its status, headers and reason phrase. */
function respondWithError(ctx: Context, failure: ApiError, state: RequestState) {
  const reply = state.scope.renderError({ error: failure, kind: errorKind(failure), logId: state.logId, nowMs: Date.now(), origin: originOf(ctx) });
  ctx.status = reply.status;
  ctx.set(failure.headers);
  if (reply.headers) ctx.set(reply.headers);
  if (reply.reason) ctx.message = reply.reason;
  ctx.body = reply.body;
}

/** The matched route as a template (`/searxng/{key}/search`), never a raw path that could hold a key. */
function routeTemplate(ctx: Context): string {
  const matched = (ctx as { _matchedRoute?: string })._matchedRoute;
  if (!matched) return 'unmatched';
  let template = routeTemplates.get(matched);
  if (template === undefined) {
    template = matched.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    routeTemplates.set(matched, template);
  }
  return template;
}

/** Each registered route's template, made once: the routes are a fixed set. */
const routeTemplates = new Map<string, string>();

/** Query parameters that may carry a key, by the names clients use. */
const KEY_PARAMETER = /^(key|api_?key|access_?token|token|subscription_?token)$/i;

export function redactQuery(querystring: string): string {
  return querystring
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      return KEY_PARAMETER.test(decodeURIComponentSafe(name)) ? `${name}=[REDACTED]` : pair;
    })
    .join('&');
}

const decodeURIComponentSafe = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** scheme://host:port of this gateway as the client reached it (Koa 3's ctx.origin is the Origin request header). */
export const originOf = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;

/** Milliseconds to one decimal, as every log line gives durations. */
export const logMilliseconds = (seconds: number) => Math.round(seconds * 1e4) / 10;

/** Status left unanswered by the router: unknown path or method. */
function unansweredRoute(ctx: Context, { scope, dialect }: PathScope): ApiError {
  const path = scope.redactPath?.(ctx.path) ?? ctx.path;
  if (ctx.status === 405) {
    return new ApiError(405, `method ${ctx.method} is not allowed on ${path}; allowed: ${ctx.response.get('Allow')}`, {
      Allow: String(ctx.response.get('Allow')),
    });
  }
  if (ctx.status === 501) return new ApiError(501, `method ${ctx.method} is not implemented`);
  if (ctx.status === 404) {
    return new ApiError(404, `no route for ${ctx.method} ${path}${dialect ? `; searchgate serves ${servedRoutes(dialect)} here` : ''}`);
  }
  return new ApiError(ctx.status, 'request failed');
}

const BODY_ERROR_MESSAGES: Record<string, string> = {
  'entity.parse.failed': 'request body is not valid JSON',
  'entity.too.large': 'request body is too large',
  // raw-body's word for a charset it cannot decode (body.ts refuses those before reading).
  'encoding.unsupported': 'unsupported charset',
  'request.aborted': 'request body was not received completely',
};

/** Client errors keep their status and a safe message; anything unexpected is a bare 500, logged here. */
export function toApiError(error: unknown, logger: Logger, logId: string): ApiError {
  if (error instanceof ApiError) return error;
  const httpError = error as { status?: number; statusCode?: number; expose?: boolean; type?: string; message?: string };
  const status = httpError.status ?? httpError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const known = httpError.type ? BODY_ERROR_MESSAGES[httpError.type] : undefined;
    if (known) return new ApiError(status, known);
    // co-body reports unparsable JSON, and JSON whose top level is not an object or array, as a SyntaxError.
    if (error instanceof SyntaxError) return new ApiError(400, 'request body is not a valid JSON object');
    return new ApiError(status, httpError.expose && httpError.message ? httpError.message : 'invalid request');
  }
  logger.error('unhandled error', {
    log_id: logId,
    error: (error as Error)?.message,
    stack: (error as Error)?.stack,
  });
  return new ApiError(500, 'internal server error');
}

/** A JSON request body of at most `limit` ("16kb", or bytes): 415 for any other type, before it is read. */
export const jsonBody = (limit: string | number) => requestBody(limit, ['json']);

/**
 * A request body of one of `types` (JSON, and for SearXNG form fields too), at most `limit`; 415
 * for a body of any other type, before it is read. A request without a body reads as {}: clients
 * post nothing where a vendor takes its parameters from the query string (LangChain's Serper).
 * One middleware, so that it can be spread into a route's list (body.ts reads it).
 */
export function requestBody(limit: string | number, types: readonly BodyType[]) {
  return [readBody(limit, types)];
}

/** Authenticates the request's Bearer key and names it (never its value) in the request's log line. */
export async function authenticateRequest(ctx: Context, authenticator: Authenticator): Promise<Principal> {
  return namePrincipal(ctx, await authenticator.authenticate(ctx.get('authorization') || undefined));
}

/** Puts the key's name (never its value) and account in the request's log line. */
export function namePrincipal(ctx: Context, principal: Principal): Principal {
  const state = ctx.state as RequestState;
  state.keyName = principal.keyName;
  if (principal.account) state.account = principal.account.name;
  return principal;
}
