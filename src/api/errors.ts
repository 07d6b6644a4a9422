/**
 * Every failure the API reports is an ApiError: an HTTP status, a message a client can act on,
 * and optional response headers (Retry-After, Allow). Anything else that escapes a handler is a bug
 * and is reported as a bare 500 so that no internal detail reaches the client.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.headers = headers;
  }
}

/** Whole seconds for a Retry-After header: rounded up, and never 0, which would invite an instant retry. */
export const retryAfterSeconds = (waitMs: number) => Math.max(1, Math.ceil(waitMs / 1000));

export const badRequest = (message: string) => new ApiError(400, message);
export const unauthorized = (message: string) =>
  new ApiError(401, message, { 'WWW-Authenticate': 'Bearer realm="searchgate"' });

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
