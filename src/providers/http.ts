/**
 * The one HTTP client every provider uses: keep-alive connections, a per-attempt timeout under the
 * request's overall deadline, a cap on reply size, and the classification of every failure into an
 * UpstreamError. Providers only build requests and read replies.
 */
import { Pool, type Dispatcher } from 'undici';
import { UpstreamError, failureKindOfStatus, parseRetryAfter, type UpstreamFailureKind } from './errors.js';

/** One keep-alive pool per upstream origin, shared by every provider that calls it. */
const pools = new Map<string, Pool>();
function poolFor(origin: string): Pool {
  let pool = pools.get(origin);
  if (!pool) {
    pool = new Pool(origin, { connections: 256, pipelining: 1, keepAliveTimeout: 10_000 });
    pools.set(origin, pool);
  }
  return pool;
}

const DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/**
 * A provider's own reading of a non-2xx reply where it differs from the HTTP default (Tavily's 432
 * is a used-up plan, Serper's 400 "Not enough credits" too); undefined keeps the default. `body` is
 * the reply parsed as JSON, undefined when it is not JSON.
 */
export type Classify = (status: number, rawBody: string, body: unknown) => UpstreamFailureKind | undefined;

export interface JsonCall {
  provider: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  /** The request's overall deadline. */
  signal: AbortSignal;
  maxResponseBytes?: number;
  /** Values (API keys) that must never appear in an error message. */
  secrets?: readonly string[];
  classify?: Classify;
  /**
   * How long a 429 without Retry-After means to wait, for vendors whose rate limit has a fixed
   * window (Brave's is one second); without it such a 429 carries no wait.
   */
  rateLimitWindowMs?: number;
}

export async function callJson(call: JsonCall): Promise<unknown> {
  const fail = (kind: ConstructorParameters<typeof UpstreamError>[1], message: string, status?: number, retryAfterMs?: number) =>
    new UpstreamError(call.provider, kind, redact(message, call.secrets), status, retryAfterMs);

  let reply: RawReply;
  try {
    const url = new URL(call.url);
    reply = await exchange(
      poolFor(url.origin),
      {
        path: url.pathname + url.search,
        method: call.method ?? (call.body === undefined ? 'GET' : 'POST'),
        headers: {
          accept: 'application/json',
          ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...call.headers,
        },
        body: call.body === undefined ? null : JSON.stringify(call.body),
      },
      call,
    );
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    if (error instanceof ReplyTooLarge) throw fail('garbage', error.message);
    if (error instanceof AttemptAborted) throw fail('timeout', error.byDeadline ? 'request deadline reached' : `no reply within ${call.timeoutMs} ms`);
    throw fail('network', describeNetworkError(error));
  }

  const { statusCode, headers, raw } = reply;
  if (statusCode >= 200 && statusCode < 300) {
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      throw fail('garbage', `reply is not JSON (HTTP ${statusCode})`, statusCode);
    }
  }
  const body = parseJson(raw);
  const detail = upstreamMessage(raw, body, call.secrets);
  const message = `HTTP ${statusCode}${detail ? `: ${detail}` : ''}`;
  const kind = call.classify?.(statusCode, raw, body) ?? failureKindOfStatus(statusCode);
  // A wait only means something for failures that pass: a refused key has no Retry-After worth keeping.
  const retryAfterMs =
    kind === 'rate_limited' || kind === 'quota' || kind === 'unavailable'
      ? (parseRetryAfter(headers['retry-after']) ?? (kind === 'rate_limited' ? call.rateLimitWindowMs : undefined))
      : undefined;
  throw fail(kind, message, statusCode, retryAfterMs);
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return undefined;
  }
}

class ReplyTooLarge extends Error {}

/** The attempt was given up: its own timeout passed, or the request's deadline (byDeadline). */
class AttemptAborted extends Error {
  constructor(readonly byDeadline: boolean) {
    super(byDeadline ? 'request deadline reached' : 'attempt timed out');
  }
}

interface RawReply {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as UTF-8 text. */
  raw: string;
}

/**
 * One request and its whole reply, through undici's dispatch handler: the reply's chunks are gathered
 * as they arrive, up to `maxResponseBytes`, with no stream, async resource or AbortSignal made for
 * the attempt. `pool.request()` makes all three, and they were most of the client's cost on an
 * uncached search (docs/benchmarks.md, "Gateway overhead"). The attempt ends at its own timeout or at
 * the request's deadline (call.signal), whichever comes first; the timer and the listener hold the
 * attempt until it settles, so no garbage collection can drop its timeout.
 */
function exchange(pool: Pool, request: { path: string; method: 'GET' | 'POST'; headers: Record<string, string>; body: string | null }, call: JsonCall): Promise<RawReply> {
  const maxBytes = call.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const deadline = call.signal;
  if (deadline.aborted) return Promise.reject(new AttemptAborted(true));
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | null = null;
    /** Why the attempt was given up, before undici was told (it may not have started yet). */
    let abandoned: Error | null = null;
    let statusCode = 0;
    let headers: RawReply['headers'] = {};
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;

    const settle = (error: Error | null, reply?: RawReply) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      deadline.removeEventListener('abort', onDeadline);
      if (error) reject(error);
      else resolve(reply!);
    };
    const abandon = (reason: Error) => {
      if (settled || abandoned) return;
      abandoned = reason;
      // Once started, undici ends the request and calls onResponseError. One still waiting for a
      // connection is aborted as it starts, but its caller need not wait for that.
      if (controller) controller.abort(reason);
      else settle(reason);
    };
    const onDeadline = () => abandon(new AttemptAborted(true));
    const timer = setTimeout(() => abandon(new AttemptAborted(false)), call.timeoutMs);
    deadline.addEventListener('abort', onDeadline, { once: true });

    pool.dispatch(
      { path: request.path, method: request.method, headers: request.headers, body: request.body },
      {
        onRequestStart(started) {
          controller = started;
          if (abandoned) started.abort(abandoned);
        },
        onResponseStart(_controller, status, replyHeaders) {
          // 1xx informational answers come before the real one.
          if (status < 200) return;
          statusCode = status;
          headers = replyHeaders;
        },
        onResponseData(_controller, chunk) {
          size += chunk.length;
          if (size <= maxBytes) chunks.push(chunk);
          else abandon(new ReplyTooLarge(`reply larger than ${maxBytes} bytes`));
        },
        onResponseEnd() {
          settle(null, { statusCode, headers, raw: chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8') });
        },
        onResponseError(_controller, error) {
          // The reason the attempt was given up for, rather than undici's wrapping of it.
          settle(abandoned ?? error);
        },
      },
    );
  });
}

function describeNetworkError(error: unknown): string {
  const code = (error as { code?: string; cause?: { code?: string } })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
  return code ? `connection failed (${code})` : 'connection failed';
}

/** The upstream's own explanation, from the usual JSON error fields, without secrets, kept short. */
function upstreamMessage(raw: string, body: unknown, secrets: readonly string[] | undefined): string {
  let text = raw;
  if (body !== undefined) {
    const parsed = (body ?? {}) as Record<string, unknown>;
    const candidate = parsed.message ?? parsed.msg ?? parsed.error ?? parsed.detail;
    text = typeof candidate === 'string' ? candidate : candidate ? JSON.stringify(candidate) : '';
  } else if (/^\s*</.test(raw)) {
    // Not JSON: an HTML error page says nothing useful to our client.
    text = '';
  }
  // Redact before shortening: a key cut in two would no longer match.
  return shorten(redact(text, secrets));
}

const shorten = (text: string): string => {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > 200 ? `${oneLine.slice(0, 200)}…` : oneLine;
};

/**
 * An error an upstream reports inside a 2xx reply's envelope (LangSearch's `{"code": 429, "msg"}`,
 * Jina's `{"code": 402, "name", "message"}`): read as the HTTP status it names would be, never as
 * content or as no results.
 */
export function envelopeError(
  provider: string,
  code: number,
  detail: string,
  secrets: readonly string[],
  extra: { classify?: Classify; retryAfterMs?: number } = {},
): UpstreamError {
  const kind = extra.classify?.(code, '', undefined) ?? failureKindOfStatus(code);
  const safe = shorten(redact(detail, secrets));
  return new UpstreamError(provider, kind, `envelope code ${code}${safe ? `: ${safe}` : ''}`, code, extra.retryAfterMs);
}

export function redact(message: string, secrets: readonly string[] | undefined): string {
  let safe = message;
  for (const secret of secrets ?? []) if (secret) safe = safe.split(secret).join('***');
  return safe;
}
