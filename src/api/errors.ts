/**
 * Every failure the API reports is an ApiError: an HTTP status, a message a client can act on,
 * and optional response headers (Retry-After, Allow). Anything else that escapes a handler is a bug
 * and is reported as a bare 500 so that no internal detail reaches the client.
 *
 * The spec's error body (§2.5) is the default rendering. Vendor dialects render the same failure in
 * their vendor's shape, with the vendor's status where it has its own (src/dialects/errors.ts); for
 * that, a failure also says what went wrong in words a dialect can map (ErrorKind) and, for an
 * invalid request, which parameter.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Set where the status alone does not tell (a 401 for a missing key rather than a wrong one). */
  readonly kind: ErrorKind | undefined;
  readonly details: InvalidParameter | undefined;

  constructor(
    status: number,
    message: string,
    headers: Record<string, string> = {},
    extra: { kind?: ErrorKind; details?: InvalidParameter } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.headers = headers;
    this.kind = extra.kind;
    this.details = extra.details;
  }
}

/**
 * What went wrong, in the terms the vendors' error tables use (../shared/spec/dialects.md §7): each
 * dialect picks its own status and wording for each.
 */
export type ErrorKind =
  | 'missing_key'
  | 'invalid_key'
  | 'disabled_account'
  | 'invalid_request'
  | 'not_found'
  | 'method_not_allowed'
  | 'too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'allowance_exhausted'
  | 'upstream_failure'
  | 'upstream_unavailable'
  | 'upstream_timeout'
  | 'not_implemented'
  | 'internal';

/** The request parameter an invalid-request failure is about, for vendors that name it (Brave, Bing). */
export interface InvalidParameter {
  parameter: string;
  /** Where it was: the query string, the JSON body, a header. */
  location: 'query' | 'body' | 'header' | 'path';
  problem: 'missing' | 'invalid';
  value?: unknown;
}

/** The kind of a failure: what it says of itself, else what its status and headers imply. */
export function errorKind(error: ApiError): ErrorKind {
  if (error.kind) return error.kind;
  switch (error.status) {
    case 401:
      return 'invalid_key';
    case 403:
      return 'disabled_account';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 413:
      return 'too_large';
    case 415:
      return 'unsupported_media_type';
    case 429:
      return error.headers['X-RateLimit-Scope'] === 'day' ? 'allowance_exhausted' : 'rate_limited';
    case 501:
      return 'not_implemented';
    case 502:
      return 'upstream_failure';
    case 503:
      return 'upstream_unavailable';
    case 504:
      return 'upstream_timeout';
    default:
      return error.status >= 500 ? 'internal' : 'invalid_request';
  }
}

/** Whole seconds for a Retry-After header: rounded up, and never 0, which would invite an instant retry. */
export const retryAfterSeconds = (waitMs: number) => Math.max(1, Math.ceil(waitMs / 1000));

export const badRequest = (message: string, details?: InvalidParameter) => new ApiError(400, message, {}, details ? { details } : {});
export const unauthorized = (message: string, kind: 'missing_key' | 'invalid_key' = 'invalid_key') =>
  new ApiError(401, message, { 'WWW-Authenticate': 'Bearer realm="searchgate"' }, { kind });

/** Spec §2.5: `code` is the status as a string; the description is in both `message` and `msg`. */
export interface ErrorBody {
  code: string;
  log_id: string;
  message: string;
  msg: string;
}

export function errorBody(status: number, logId: string, message: string): ErrorBody {
  return { code: String(status), log_id: logId, message, msg: message };
}
