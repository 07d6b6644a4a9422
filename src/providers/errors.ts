/**
 * What went wrong upstream, classified once where the reply is read, so that retries, fallback and
 * the status at our edge all decide from the same facts.
 */
export type UpstreamFailureKind =
  | 'auth' // the upstream refused our credentials
  | 'rate_limited' // 429, possibly with Retry-After
  | 'quota' // the upstream plan's credits or monthly allowance are used up: no retry helps for a while
  | 'bad_request' // the upstream rejected what we sent
  | 'unavailable' // 5xx or 408
  | 'network' // refused, reset, closed mid-reply
  | 'timeout' // this attempt ran out of time
  | 'garbage'; // a reply we cannot read

const RETRYABLE: ReadonlySet<UpstreamFailureKind> = new Set(['rate_limited', 'unavailable', 'network', 'timeout']);

export class UpstreamError extends Error {
  constructor(
    readonly provider: string,
    readonly kind: UpstreamFailureKind,
    message: string,
    readonly status?: number,
    readonly retryAfterMs?: number,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'UpstreamError';
  }

  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
  }
}

/** What an HTTP status (or a status an upstream puts in its reply envelope) means when the upstream says nothing more specific. */
export function failureKindOfStatus(status: number): UpstreamFailureKind {
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'auth';
  if (status === 408 || status >= 500) return 'unavailable';
  return 'bad_request';
}

/** Retry-After is either delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | string[] | undefined, nowMs = Date.now()): number | undefined {
  const header = Array.isArray(value) ? value[0] : value;
  if (!header) return undefined;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const dateMs = Date.parse(header);
  return Number.isNaN(dateMs) ? undefined : Math.max(0, dateMs - nowMs);
}
