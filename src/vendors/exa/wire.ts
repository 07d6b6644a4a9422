/**
 * Exa's wire format, both directions: what searchgate sends Exa (search.ts, contents.ts) and what it
 * answers Exa's clients (dialect.ts). Docs: https://exa.ai/docs/reference/search,
 * https://exa.ai/docs/reference/get-contents, https://exa.ai/docs/reference/error-codes,
 * https://exa.ai/docs/changelog/contents-endpoint-status-changes (the statuses of /contents);
 * exa-labs/openapi-spec exa-openapi-spec.yaml; the clients read: exa-py 2.28.0 exa_py/api.py,
 * exa-js 2.23.0 dist/index.js (../shared/spec/dialects.md §5.2, §6.9, §6.11).
 */
import type { PageFailure } from '../../providers/types.js';

/** The header Exa's clients send the key in. */
export const EXA_KEY_HEADER = 'x-api-key';

/** numResults accepts 1..100 on standard plans. */
export const EXA_MAX_NUM_RESULTS = 100;
export const EXA_DEFAULT_NUM_RESULTS = 10;
/** The SDKs' DEFAULT_MAX_CHARACTERS: the text cap when `text` is `true` or has no maxCharacters. */
export const EXA_DEFAULT_MAX_CHARACTERS = 10_000;

/** `text`: true, or options of which maxCharacters is the cap. */
export type ExaTextOption = boolean | { maxCharacters?: number; includeHtmlTags?: boolean; verbosity?: string };
/** `highlights` and `summary`: true, or options (query, maxCharacters, schema…). */
export type ExaContentOption = boolean | Record<string, unknown>;

export interface ExaContentsOptions {
  text?: ExaTextOption;
  highlights?: ExaContentOption;
  summary?: ExaContentOption;
  livecrawl?: string;
  /** Milliseconds. */
  livecrawlTimeout?: number;
}

export interface ExaSearchRequest {
  query: string;
  type?: string;
  numResults?: number;
  category?: string;
  userLocation?: string;
  includeDomains?: string[];
  excludeDomains?: string[];
  /** ISO 8601 date or date-time. */
  startPublishedDate?: string;
  endPublishedDate?: string;
  includeText?: string[];
  excludeText?: string[];
  contents?: ExaContentsOptions;
}

export interface ExaResult {
  /** The URL, for search results. */
  id: string;
  url: string;
  title: string | null;
  publishedDate: string | null;
  author: string | null;
  text?: string;
  highlights?: string[];
  highlightScores?: number[];
  summary?: string;
}

export interface ExaSearchResponse {
  requestId: string;
  results: ExaResult[];
}

export interface ExaContentsRequest extends ExaContentsOptions {
  urls: string[];
  /** The older name of `urls`. */
  ids?: string[];
}

/** Why a URL of /contents has no content: Exa's tags, each with the status it pairs them with. */
export const EXA_CRAWL_TAGS = {
  CRAWL_NOT_FOUND: 404,
  CRAWL_TIMEOUT: 408,
  SOURCE_NOT_AVAILABLE: 403,
  CRAWL_UNKNOWN_ERROR: 500,
} as const;
export type ExaCrawlTag = keyof typeof EXA_CRAWL_TAGS;

/** One per requested URL of /contents; `httpStatusCode` is the target page's, not the reply's. */
export type ExaContentStatus =
  | { id: string; status: 'success' }
  | { id: string; status: 'error'; error: { tag: ExaCrawlTag | (string & {}); httpStatusCode: number | null } };

export interface ExaContentsResponse {
  requestId: string;
  results: ExaResult[];
  statuses: ExaContentStatus[];
}

/** Every Exa error: the request's id, a message, and a machine-readable tag. */
export interface ExaErrorBody {
  requestId: string;
  error: string;
  tag: string;
}

/**
 * The tags of Exa's errors that searchgate answers with. INVALID_REQUEST_BODY, NO_MORE_CREDITS and
 * API_KEY_BUDGET_EXCEEDED are in third-party lists of Exa's tags; INVALID_API_KEY, RATE_LIMIT_EXCEEDED
 * and ACCESS_DENIED too, unverified against Exa's own page (which lists statuses, not tags);
 * UPSTREAM_ERROR and UPSTREAM_TIMEOUT are searchgate's.
 */
export const EXA_ERROR_TAGS = {
  invalidApiKey: 'INVALID_API_KEY',
  accessDenied: 'ACCESS_DENIED',
  invalidRequestBody: 'INVALID_REQUEST_BODY',
  noMoreCredits: 'NO_MORE_CREDITS',
  rateLimitExceeded: 'RATE_LIMIT_EXCEEDED',
  notFound: 'NOT_FOUND',
  methodNotAllowed: 'METHOD_NOT_ALLOWED',
  upstreamError: 'UPSTREAM_ERROR',
  upstreamTimeout: 'UPSTREAM_TIMEOUT',
  internalError: 'INTERNAL_ERROR',
} as const;

/** Exa's 402: the account's credits or the key's budget are spent. */
export const EXA_PAYMENT_REQUIRED_STATUS = 402;

/** A page's failure as a `statuses` error entry: the page's own status when known, else the one Exa pairs with the tag. */
export function crawlError({ failure, httpStatus }: PageFailure): { tag: ExaCrawlTag; httpStatusCode: number } {
  const tag: ExaCrawlTag =
    failure === 'not_found' ? 'CRAWL_NOT_FOUND' : failure === 'timeout' ? 'CRAWL_TIMEOUT' : failure === 'blocked' ? 'SOURCE_NOT_AVAILABLE' : 'CRAWL_UNKNOWN_ERROR';
  return { tag, httpStatusCode: httpStatus ?? EXA_CRAWL_TAGS[tag] };
}

/** A `statuses` error entry as a page's failure: not found (with the page's status), a timeout, a blocked source, else an error. */
export function pageFailureOf(error: unknown): PageFailure {
  const { tag, httpStatusCode } = (error && typeof error === 'object' ? error : {}) as { tag?: unknown; httpStatusCode?: unknown };
  const status = typeof httpStatusCode === 'number' ? httpStatusCode : undefined;
  switch (tag) {
    case 'CRAWL_NOT_FOUND':
      return status === undefined ? { failure: 'not_found' } : { failure: 'not_found', httpStatus: status };
    case 'CRAWL_TIMEOUT':
      return { failure: 'timeout' };
    case 'SOURCE_NOT_AVAILABLE':
      return { failure: 'blocked' };
    default:
      return { failure: 'error' };
  }
}
