/**
 * The Brave Search API's web search as searchgate serves it to Brave's clients
 * (../shared/spec/dialects.md §5.3, §7.6): GET and POST /brave/res/v1/web/search, parameters in the
 * query string (GET) or a JSON body (POST, where query-string ones count too and the body wins).
 * The key is `X-Subscription-Token`, else `Authorization: Bearer`.
 *
 * Pointing a client here, by the full URL: LangChain `BraveSearchWrapper(api_key=KEY,
 * base_url=BASE + "/brave/res/v1/web/search")`; litellm `search(…, search_provider="brave",
 * api_base=BASE + "/brave/res/v1/web/search", api_key=KEY)`.
 *
 * Honoured: q (site:x and -site:x become domain filters, and so does litellm's `(q) AND (site:a OR
 * site:b)`; operators=false searches them as words), count (1..20, more is served as 20), offset (a
 * page index 0..9: results from offset × count; a later page is empty), freshness (pd, pw, pm, py,
 * YYYY-MM-DDtoYYYY-MM-DD), search_lang, result_filter (without `web`, no web section) and inline
 * Goggles' `$discard,site=x` rules (the site is excluded). Accepted and ignored: extra_snippets,
 * text_decorations (no highlight markup is ever added), spellcheck, summary, include_fetch_metadata,
 * enable_rich_callback, country, ui_lang, safesearch, units, goggles_id, hosted Goggles and other
 * Goggle rules.
 *
 * Answers hold the web section only, and only when it has results (as Brave, which leaves out empty
 * sections: never null); titles and descriptions are strings, never null (R6), page_age is the
 * published date when known, and there are no extra_snippets. Account keys' answers carry Brave's
 * two-window X-RateLimit headers: the account's per-second window (when it has one) and its daily
 * allowance (`1, 1000` / `1;w=1, 1000;w=86400`, reset in seconds).
 *
 * Errors are Brave's ErrorResponse with its statuses: 422 VALIDATION for a missing key or a bad
 * parameter, 422 SUBSCRIPTION_TOKEN_INVALID for a wrong or deleted key (LangChain's wrapper shows
 * only "HTTP error 422"; litellm raises BadRequestError with the body), 429 RATE_LIMITED and
 * QUOTA_LIMITED; `error.id` is the log_id.
 */
import { badRequest, type ApiError, type InvalidParameter } from '../../api/errors.js';
import { parseFreshness, type Freshness } from '../../api/freshness.js';
import { webSearchRequest } from '../../api/validate.js';
import { tabledFailure, type ErrorRow, type ErrorTable } from '../../dialects/error-table.js';
import { reasonPhrase } from '../../dialects/errors.js';
import { readQuery, readQueryAndBody, type ParameterSchema } from '../../dialects/params.js';
import { dateRange, mergeDomains, PERIOD_PRESET, queryAndSites, snippetOf, titleOf, type Period } from '../../dialects/search.js';
import { searchRoute, type Dialect, type DialectFailure, type DialectInput, type DialectTools, type ErrorReply, type RateWindowState } from '../../dialects/types.js';
import type { GatewayResult } from '../../gateway/search.js';
import { AccountLimitRefusal } from '../../state/accounts.js';
import { windowOf } from '../../state/store.js';
import {
  BRAVE_DATE_RANGE,
  BRAVE_DEFAULT_COUNT,
  BRAVE_DETAILS,
  BRAVE_FRESHNESS,
  BRAVE_KEY_HEADER,
  BRAVE_LANGUAGE_TAGS,
  BRAVE_LAST_PAGE,
  BRAVE_MAX_COUNT,
  BRAVE_WEB_SEARCH_PATH,
  braveRateLimitHeaders,
  bravePageAge,
  discardedSites,
  type BraveErrorCode,
  type BraveErrorResponse,
  type BraveMetaUrl,
  type BraveValidationError,
  type BraveWebResult,
  type BraveWebSearchParameters,
  type BraveWebSearchResponse,
} from './wire.js';

const IGNORED = { description: 'Accepted and ignored.' };

const parametersSchema: ParameterSchema = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { type: 'string', pattern: '\\S', description: 'The query; site:x and -site:x become domain filters unless operators=false.' },
    count: { type: 'integer', minimum: 1, default: BRAVE_DEFAULT_COUNT, description: `Results per page, 1..${BRAVE_MAX_COUNT}; more is served as ${BRAVE_MAX_COUNT}.` },
    offset: {
      type: 'integer',
      minimum: 0,
      default: 0,
      description: `Page index, 0..${BRAVE_LAST_PAGE}: the results from offset × count on. A later page is empty.`,
    },
    freshness: { type: 'string', description: 'pd, pw, pm (31 days), py, or a range of UTC days YYYY-MM-DDtoYYYY-MM-DD.' },
    search_lang: { type: 'string', description: "Language of the results: Brave's code (en, de, jp, pt-br, zh-hant…)." },
    result_filter: { type: 'string', description: 'Comma-separated sections; without web, the answer has no web section (searchgate has no other).' },
    goggles: {
      type: ['string', 'array'],
      items: { type: 'string' },
      description: 'Inline Goggle rules, one per line: $discard,site=x excludes the site. Hosted Goggles and other rules are ignored.',
    },
    operators: { type: 'boolean', default: true, description: 'false: site: operators in q are searched as words.' },
    extra_snippets: { description: 'Accepted and ignored: no result has extra snippets.' },
    text_decorations: { description: 'Accepted and ignored: descriptions never carry highlight markup.' },
    spellcheck: IGNORED,
    summary: IGNORED,
    include_fetch_metadata: IGNORED,
    enable_rich_callback: IGNORED,
    country: IGNORED,
    ui_lang: IGNORED,
    safesearch: IGNORED,
    units: IGNORED,
    goggles_id: IGNORED,
  },
};

type BraveParameters = Pick<BraveWebSearchParameters, 'q' | 'count' | 'offset' | 'freshness' | 'search_lang' | 'result_filter' | 'goggles' | 'operators'>;

interface Echo {
  original: string;
  count: number;
  /** The page asked for, as Brave's offset. */
  page: number;
  /** Whether result_filter lets the web section in. */
  web: boolean;
}

/** pd, pw, pm and py as the periods they stand for. */
const PERIOD_OF_FRESHNESS = new Map(Object.entries(BRAVE_FRESHNESS).map(([period, code]) => [code, period as Period]));

function freshnessOf(value: string | undefined, location: InvalidParameter['location'], nowMs: number): Freshness {
  if (!value) return parseFreshness('noLimit');
  const period = PERIOD_OF_FRESHNESS.get(value);
  if (period) return parseFreshness(PERIOD_PRESET[period]);
  const range = BRAVE_DATE_RANGE.exec(value);
  // Both bounds are given, so the clock that would stand in for a missing end is never read.
  if (range) return dateRange(range[1], range[2], nowMs, { parameter: 'freshness', location });
  throw badRequest('freshness must be pd, pw, pm, py or YYYY-MM-DDtoYYYY-MM-DD', { parameter: 'freshness', location, problem: 'invalid', value });
}

/** Whether a result_filter lets the web section in: no filter does. */
const letsWebIn = (filter: string | undefined) => !filter?.trim() || filter.split(',').some((section) => section.trim().toLowerCase() === 'web');

function readSearch(input: DialectInput, tools: DialectTools) {
  const location = input.method === 'POST' ? 'body' : 'query';
  const parameters =
    input.method === 'POST'
      ? readQueryAndBody<BraveParameters>(parametersSchema, input.query, input.body)
      : readQuery<BraveParameters>(parametersSchema, input.query);
  const count = Math.min(parameters.count ?? BRAVE_DEFAULT_COUNT, BRAVE_MAX_COUNT);
  const page = parameters.offset ?? 0;
  const { query, includeDomains, excludeDomains } = queryAndSites(parameters.q, 'q', { operators: parameters.operators ?? true });
  const discarded = [parameters.goggles ?? []].flat().flatMap(discardedSites);
  const language = parameters.search_lang ? (BRAVE_LANGUAGE_TAGS.get(parameters.search_lang.toLowerCase()) ?? parameters.search_lang) : null;
  return {
    request: webSearchRequest({
      query,
      count,
      // A page past the last is answered empty (see render); it is searched as the last page, no
      // more than a client may ask for anyway.
      offset: Math.min(page, BRAVE_LAST_PAGE) * count,
      freshness: freshnessOf(parameters.freshness, location, tools.now()),
      includeDomains,
      excludeDomains: mergeDomains(excludeDomains, discarded),
      language,
    }),
    echo: { original: parameters.q, count, page, web: letsWebIn(parameters.result_filter) } satisfies Echo,
  };
}

/** A URL's parts as Brave's meta_url gives them; a URL that does not parse keeps only its text as the path. */
function metaUrlOf(url: string): BraveMetaUrl {
  try {
    const parsed = new URL(url);
    return { scheme: parsed.protocol.replace(/:$/, ''), netloc: parsed.host, hostname: parsed.hostname, path: parsed.pathname };
  } catch {
    return { scheme: '', netloc: '', hostname: '', path: url };
  }
}

function webResultOf(result: GatewayResult): BraveWebResult {
  const pageAge = result.datePublished ? bravePageAge(result.datePublished) : undefined;
  return {
    type: 'search_result',
    title: titleOf(result),
    url: result.url,
    description: snippetOf(result),
    ...(pageAge ? { page_age: pageAge } : {}),
    meta_url: metaUrlOf(result.url),
  };
}

function render({ echo, outcome }: { echo: Echo; outcome: { results: GatewayResult[] } }): BraveWebSearchResponse {
  const pastLastPage = echo.page > BRAVE_LAST_PAGE;
  const results = pastLastPage || !echo.web ? [] : outcome.results.map(webResultOf);
  return {
    type: 'search',
    query: {
      original: echo.original,
      more_results_available: !pastLastPage && echo.page < BRAVE_LAST_PAGE && outcome.results.length === echo.count,
    },
    ...(results.length ? { web: { type: 'search', results } } : {}),
  };
}

// ---- rate headers -------------------------------------------------------------------------------

const DAY_SECONDS = 86_400;

/**
 * An account's X-RateLimit headers in Brave's two-window format: its per-second window (when it has
 * one) and its daily allowance, each reset in seconds from now, from the standard headers
 * (allowance, remaining, reset as epoch seconds of the next 00:00 UTC).
 */
function braveRateHeaders(standard: Readonly<Record<string, string>>, { perSecond, nowMs }: RateWindowState): Record<string, string> {
  const day = {
    windowSeconds: DAY_SECONDS,
    limit: Number(standard['X-RateLimit-Limit']),
    remaining: Number(standard['X-RateLimit-Remaining']),
    resetSeconds: Number(standard['X-RateLimit-Reset']) - Math.floor(nowMs / 1000),
  };
  const second = perSecond && { windowSeconds: 1, ...perSecond, resetSeconds: Math.ceil(windowOf('second', nowMs).endsInMs / 1000) };
  return braveRateLimitHeaders(second ? [second, day] : [day]);
}

// ---- errors -------------------------------------------------------------------------------------

interface BraveErrorRow extends ErrorRow {
  code: BraveErrorCode;
}

const BRAVE_ERRORS: Required<ErrorTable<BraveErrorRow>> = {
  missing_key: { status: 422, code: 'VALIDATION', canonical: BRAVE_DETAILS.validation },
  invalid_key: { status: 422, code: 'SUBSCRIPTION_TOKEN_INVALID', canonical: BRAVE_DETAILS.tokenInvalid },
  // The bad-key row's shape; the token is fine, so Brave's sentence about it is not used.
  disabled_account: { status: 403, code: 'SUBSCRIPTION_TOKEN_INVALID' },
  invalid_request: { status: 422, code: 'VALIDATION', canonical: BRAVE_DETAILS.validation },
  allowance_exhausted: { code: 'QUOTA_LIMITED', canonical: BRAVE_DETAILS.quotaLimited },
  rate_limited: { code: 'RATE_LIMITED', canonical: BRAVE_DETAILS.rateLimited },
  not_found: { code: 'NOT_FOUND' },
  method_not_allowed: { code: 'METHOD_NOT_ALLOWED' },
  too_large: { code: 'PAYLOAD_TOO_LARGE' },
  unsupported_media_type: { code: 'UNSUPPORTED_MEDIA_TYPE' },
  not_implemented: { code: 'NOT_IMPLEMENTED' },
  upstream_failure: { code: 'UPSTREAM_ERROR' },
  upstream_unavailable: { code: 'UPSTREAM_ERROR' },
  upstream_timeout: { code: 'UPSTREAM_TIMEOUT' },
  internal: { code: 'INTERNAL_ERROR' },
};

const MISSING_KEY: BraveValidationError = { type: 'missing', loc: ['header', BRAVE_KEY_HEADER.toLowerCase()], msg: 'Field required', input: null };

/** A refused parameter as FastAPI (Brave's framework) reports it: ["query", "count"], what is wrong, what was sent. */
function validationErrorOf(error: ApiError): BraveValidationError {
  const details = error.details;
  if (!details) return { type: 'value_error', loc: ['body'], msg: error.message, input: null };
  const missing = details.problem === 'missing';
  return {
    type: missing ? 'missing' : 'value_error',
    loc: [details.location, details.parameter],
    msg: missing ? 'Field required' : error.message,
    input: missing ? null : (details.value ?? null),
  };
}

/** The plan's limits and the account's use of them, as Brave's 429s carry them. */
function rateLimitMetaOf(error: ApiError) {
  const quotaLimit = Number(error.headers['X-RateLimit-Limit']);
  const perSecond = error instanceof AccountLimitRefusal ? error.windows.perSecond : null;
  return {
    plan: 'searchgate',
    rate_limit: perSecond?.limit ?? null,
    rate_current: perSecond ? perSecond.limit - perSecond.remaining : null,
    quota_limit: quotaLimit,
    quota_current: quotaLimit - Number(error.headers['X-RateLimit-Remaining']),
    component: 'rate_limiter' as const,
  };
}

function metaOf({ error, kind }: DialectFailure): BraveErrorResponse['error']['meta'] {
  switch (kind) {
    case 'missing_key':
      return { errors: [MISSING_KEY] };
    case 'invalid_request':
      return { errors: [validationErrorOf(error)] };
    case 'invalid_key':
    case 'disabled_account':
      return { component: 'authentication' };
    case 'allowance_exhausted':
    case 'rate_limited':
      return rateLimitMetaOf(error);
    default:
      return {};
  }
}

function braveErrors(failure: DialectFailure): ErrorReply {
  const { row, status, message } = tabledFailure(BRAVE_ERRORS, failure);
  const { error, logId, nowMs } = failure;
  const body: BraveErrorResponse = {
    type: 'ErrorResponse',
    error: { id: logId, status, code: row.code, detail: message, meta: metaOf(failure) },
    time: Math.floor(nowMs / 1000),
  };
  return {
    status,
    body,
    // A refusal of the account's limits reports them as every other answer does: in Brave's format.
    ...(error instanceof AccountLimitRefusal ? { headers: braveRateHeaders(error.headers, error.windows) } : {}),
    // The status line names searchgate's reason: Brave's sentences before it would fill the 80 characters.
    reason: reasonPhrase(status, error.message),
  };
}

export const braveDialect: Dialect = {
  name: 'brave',
  prefixes: ['/brave'],
  keys: [{ in: 'header', name: BRAVE_KEY_HEADER }, { in: 'bearer' }],
  keyHint: `send "${BRAVE_KEY_HEADER}: <API_KEY>" (or "Authorization: Bearer <API_KEY>")`,
  renderError: braveErrors,
  rateLimitHeaders: braveRateHeaders,
  routes: [
    searchRoute<Echo>({
      operation: 'search',
      methods: ['GET', 'POST'],
      path: `/brave${BRAVE_WEB_SEARCH_PATH}`,
      read: readSearch,
      render,
      docs: {
        summary: 'Brave web search: the web section only; parameters in the query string (GET) or a JSON body (POST)',
        parameters: parametersSchema,
        body: parametersSchema,
      },
    }),
  ],
};
