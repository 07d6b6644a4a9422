/**
 * The middleware every request passes through: a fresh log_id, the in-flight gauge, the request
 * metrics and log line, and the one place where any failure becomes the spec's error body.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import bodyParser from 'koa-bodyparser';
import { ApiError, errorBody } from '../api/errors.js';
import type { Authenticator, Principal } from '../state/keys.js';
import type { Logger } from './logger.js';
import { seriesCache, type Metrics } from './metrics.js';

export interface RequestState {
  logId: string;
  cacheStatus?: string;
  provider?: string;
  keyName?: string;
  account?: string;
}

export const newLogId = () => randomUUID().replaceAll('-', '');

export function requestLifecycle(metrics: Metrics, logger: Logger) {
  const requestSeries = seriesCache(metrics.httpRequests, metrics.httpDuration);
  return async function lifecycle(ctx: Context, next: Next) {
    const state = ctx.state as RequestState;
    state.logId = newLogId();
    ctx.set('X-Log-Id', state.logId);
    const started = performance.now();
    metrics.inFlight.inc();
    let failure: ApiError | undefined;
    try {
      await next();
      if (ctx.body == null && ctx.status >= 400) throw unansweredRoute(ctx);
    } catch (error) {
      failure = toApiError(error, logger, state.logId);
      ctx.status = failure.status;
      ctx.set(failure.headers);
      ctx.body = errorBody(failure.status, state.logId, failure.message);
    } finally {
      metrics.inFlight.dec();
      const durationSeconds = (performance.now() - started) / 1000;
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const series = requestSeries({ route, method: ctx.method, status: String(ctx.status) });
      series.count.inc();
      series.duration.observe(durationSeconds);
      if (logger.enabled('info')) logger.info('request', {
        log_id: state.logId,
        method: ctx.method,
        path: ctx.path,
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

/** Milliseconds to one decimal, as every log line gives durations. */
export const logMilliseconds = (seconds: number) => Math.round(seconds * 1e4) / 10;

/** Status left unanswered by the router: unknown path or method. */
function unansweredRoute(ctx: Context): ApiError {
  if (ctx.status === 405) {
    return new ApiError(405, `method ${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}`, {
      Allow: String(ctx.response.get('Allow')),
    });
  }
  if (ctx.status === 501) return new ApiError(501, `method ${ctx.method} is not implemented`);
  if (ctx.status === 404) return new ApiError(404, `no route for ${ctx.method} ${ctx.path}`);
  return new ApiError(ctx.status, 'request failed');
}

const BODY_ERROR_MESSAGES: Record<string, string> = {
  'entity.parse.failed': 'request body is not valid JSON',
  'entity.too.large': 'request body is too large',
  'encoding.unsupported': 'unsupported Content-Encoding',
  'charset.unsupported': 'unsupported charset',
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
export const jsonBody = (limit: string | number) => [
  requireJsonBody,
  bodyParser({ enableTypes: ['json'], jsonLimit: String(limit), strict: true }),
];

/** POST bodies must be JSON: anything else is 415, before the body is read. */
async function requireJsonBody(ctx: Context, next: Next) {
  const type = ctx.request.type;
  if (type !== 'application/json' && !type.endsWith('+json')) {
    throw new ApiError(415, `Content-Type must be application/json${ctx.get('content-type') ? `, not ${ctx.get('content-type')}` : ''}`);
  }
  await next();
}

/** Authenticates the request's Bearer key and names it (never its value) in the request's log line. */
export async function authenticateRequest(ctx: Context, authenticator: Authenticator): Promise<Principal> {
  const principal = await authenticator.authenticate(ctx.get('authorization') || undefined);
  const state = ctx.state as RequestState;
  state.keyName = principal.keyName;
  if (principal.account) state.account = principal.account.name;
  return principal;
}
