/**
 * The one HTTP client every provider uses: keep-alive connections, a per-attempt timeout under the
 * request's overall deadline, a cap on reply size, and the classification of every failure into an
 * UpstreamError. Providers only build requests and read replies.
 */
import { finished, type Readable } from 'node:stream';
import { Pool } from 'undici';
import { signalWithTimeout } from '../util/timeout.js';
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
  const attempt = signalWithTimeout(call.signal, call.timeoutMs, 'attempt timed out');
  const attemptSignal = attempt.signal;
  const fail = (kind: ConstructorParameters<typeof UpstreamError>[1], message: string, status?: number, retryAfterMs?: number) =>
    new UpstreamError(call.provider, kind, redact(message, call.secrets), status, retryAfterMs);

  let statusCode: number;
  let headers: Record<string, string | string[] | undefined>;
  let raw: string;
  try {
    const url = new URL(call.url);
    const response = await poolFor(url.origin).request({
      path: url.pathname + url.search,
      method: call.method ?? (call.body === undefined ? 'GET' : 'POST'),
      headers: {
        accept: 'application/json',
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...call.headers,
      },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal: attemptSignal,
    });
    statusCode = response.statusCode;
    headers = response.headers;
    raw = await readLimited(response.body, call.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    if (error instanceof ReplyTooLarge) throw fail('garbage', error.message);
    if (attemptSignal.aborted) throw fail('timeout', call.signal.aborted ? 'request deadline reached' : `no reply within ${call.timeoutMs} ms`);
    throw fail('network', describeNetworkError(error));
  } finally {
    attempt.dispose();
  }

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

/**
 * The reply body as text, destroyed past `maxBytes`. Read through its events: an async iterator over
 * the stream costs several promises per chunk (it showed in the profile of the uncached path).
 */
function readLimited(body: Readable, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      reject(new ReplyTooLarge(`reply larger than ${maxBytes} bytes`));
      body.destroy();
    });
    // The stream's error, or a premature close, as iterating it would throw them.
    finished(body, (error) => (error ? reject(error) : resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'))));
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
