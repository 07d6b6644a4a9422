/**
 * Errors in a vendor's shape (../shared/spec/dialects.md R11, §7). Each dialect maps a failure's
 * kind to its vendor's status and body; these are the pieces they share: the message (the vendor's
 * canonical sentence, then searchgate's own reason), the reason phrase for clients that show only
 * the status line, and the routes a 404 names.
 */
import { STATUS_CODES } from 'node:http';
import { errorBody, type ApiError } from '../api/errors.js';
import type { Dialect, DialectFailure, ErrorReply, ErrorScope } from './types.js';

/** The vendor's sentence, then ` (searchgate: <what /v1 would say>)`; /v1's message alone where the vendor has none. */
export const vendorMessage = (canonical: string | undefined, error: ApiError): string =>
  canonical ? `${canonical} (searchgate: ${error.message})` : error.message;

/**
 * A reason phrase for the status line (`401 Unauthorized - API key sg_… has been deleted`):
 * LangChain's Tavily, Bing and Serper wrappers surface only requests' HTTPError, whose text is the
 * status line. searchgate's own reason is the part worth reading there (the vendor's canonical
 * sentence, in the body, says little more than the status). Printable ASCII, at most 80 characters,
 * so that any HTTP stack accepts it.
 */
export function reasonPhrase(status: number, reason: string): string {
  const text = `${STATUS_CODES[status] ?? 'Error'} - ${reason}`.replace(/[^\x20-\x7e]+/g, ' ').replace(/\s+/g, ' ').trim();
  return text.slice(0, 80).trimEnd();
}

/** The routes a dialect serves, for its 404: "POST /tavily/search, POST /tavily/extract". */
export const servedRoutes = (dialect: Pick<Dialect, 'routes'>): string =>
  dialect.routes.map((route) => `${route.methods.join('|')} ${route.path}`).join(', ');

/** The spec's own error body (§2.5): the /v1 API's rendering, and the default for paths of no dialect. */
export const specErrorReply = ({ error, logId }: DialectFailure): ErrorReply => ({
  status: error.status,
  body: errorBody(error.status, logId, error.message),
});

/** The spec's error body on every path no dialect claims (/healthz, /dashboard, an unknown path); `none` in metrics. */
export const specErrors: ErrorScope = { name: 'none', prefixes: [], renderError: specErrorReply };
