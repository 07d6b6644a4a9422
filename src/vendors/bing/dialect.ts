/**
 * The Bing Web Search API v7 as searchgate serves it to Bing's clients, for code written against it
 * before Microsoft retired it (../shared/spec/dialects.md §5.5, §7.8): GET /bing/v7.0/search, the key
 * in `Ocp-Apim-Subscription-Key`, else `Authorization: Bearer`.
 *
 * Pointing a client here, by the full URL: LangChain `BingSearchAPIWrapper(bing_subscription_key=KEY,
 * bing_search_url=BASE + "/bing/v7.0/search")`, or the environment variables BING_SUBSCRIPTION_KEY
 * and BING_SEARCH_URL.
 *
 * Honoured: q (site:x and -site:x become domain filters), count (10 when not given; more than 50 is
 * served as 50), offset (results to skip), freshness (Day, Week, Month in any case, a day
 * YYYY-MM-DD, a range YYYY-MM-DD..YYYY-MM-DD), setLang, else mkt, as the results' language,
 * textFormat (HTML: & < > " ' escaped in name and snippet) and responseFilter (naming answer types
 * without Webpages, or excluding -Webpages, leaves webPages out). Accepted and ignored:
 * textDecorations (no hit markup is ever added), safeSearch, answerCount, promote, cc.
 *
 * Answers hold the webPages answer only, and only when it has results (as Bing, which leaves out an
 * answer it has nothing for). Honest defaults (R6): webSearchUrl is null, totalEstimatedMatches is
 * the upstream's estimate or else the results counted (offset included), a name is "" when the page
 * has no title, dates are present only when known.
 *
 * Errors take the two shapes the real service gave: Azure API Management's `{"error": {"code",
 * "message"}}` for a missing or wrong key (401), a disabled account (403), a spent allowance (403,
 * "Out of call volume quota", with the time to 00:00 UTC) and a rate limit (429); Bing's
 * ErrorResponse for bad parameters (400 InvalidRequest, naming the parameter) and for server errors.
 * The HTTP reason phrase carries searchgate's reason: LangChain's wrapper shows only requests'
 * HTTPError text, the status line.
 */
import { badRequest, type ApiError } from '../../api/errors.js';
import { parseFreshness, type Freshness } from '../../api/freshness.js';
import { webSearchRequest } from '../../api/validate.js';
import { reasonPhrase, vendorMessage } from '../../dialects/errors.js';
import { escapeHtml } from '../../dialects/html.js';
import { IGNORED_PARAMETER, readQuery, type ParameterSchema } from '../../dialects/params.js';
import { dateRange, PERIOD_PRESET, queryAndSites, snippetOf, titleOf, totalMatches } from '../../dialects/search.js';
import { searchRoute, type Dialect, type DialectFailure, type DialectInput, type DialectTools, type ErrorReply } from '../../dialects/types.js';
import type { GatewayResult } from '../../gateway/search.js';
import {
  BING_API_PATH,
  BING_DATE_RANGE,
  BING_DEFAULT_COUNT,
  BING_FRESHNESS_PERIODS,
  BING_KEY_HEADER,
  BING_MAX_COUNT,
  BING_MESSAGES,
  BING_SEARCH_PATH,
  BING_WEBPAGES_ANSWER,
  bingWebPageId,
  type ApimErrorBody,
  type BingError,
  type BingErrorResponse,
  type BingSearchParameters,
  type BingSearchResponse,
  type BingWebPage,
} from './wire.js';

const PREFIX = '/bing';

const parametersSchema: ParameterSchema = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { type: 'string', pattern: '\\S', description: 'The query; site:x and -site:x become domain filters.' },
    count: { type: 'integer', minimum: 1, default: BING_DEFAULT_COUNT, description: `Results wanted; more than ${BING_MAX_COUNT} is served as ${BING_MAX_COUNT}.` },
    offset: { type: 'integer', minimum: 0, default: 0, description: 'Results to skip.' },
    freshness: { type: 'string', description: 'Day, Week, Month (any case), a UTC day YYYY-MM-DD, or a range YYYY-MM-DD..YYYY-MM-DD.' },
    setLang: { type: 'string', description: 'Language of the results (en, pt-BR); wins over mkt.' },
    mkt: { type: 'string', description: 'Market (en-US); its language is the results\' language when setLang is not given.' },
    textFormat: { type: 'string', pattern: '^(?:[Rr][Aa][Ww]|[Hh][Tt][Mm][Ll])$', default: 'Raw', description: 'Raw or HTML (any case); HTML escapes & < > " \' in name and snippet.' },
    textDecorations: { type: 'boolean', description: 'Accepted; no hit markup is ever added.' },
    responseFilter: { type: 'string', description: 'Answer types to include, or -Type to exclude; webPages is left out unless Webpages is let in.' },
    safeSearch: IGNORED_PARAMETER,
    answerCount: IGNORED_PARAMETER,
    promote: IGNORED_PARAMETER,
    cc: IGNORED_PARAMETER,
  },
};

type Parameters = Pick<BingSearchParameters, 'q' | 'count' | 'offset' | 'freshness' | 'setLang' | 'mkt' | 'textFormat' | 'responseFilter'>;

interface Echo {
  originalQuery: string;
  html: boolean;
  webPages: boolean;
}

function freshnessOf(value: string | undefined, nowMs: number): Freshness {
  if (!value) return parseFreshness('noLimit');
  const period = BING_FRESHNESS_PERIODS.get(value.toLowerCase());
  if (period) return parseFreshness(PERIOD_PRESET[period]);
  const days = BING_DATE_RANGE.exec(value);
  // Both bounds are given (a single day is its own range), so the clock dateRange would read for a missing end is not.
  if (days) return dateRange(days[1], days[2] ?? days[1], nowMs, { parameter: 'freshness', location: 'query' });
  throw badRequest('freshness must be Day, Week, Month, YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD', {
    parameter: 'freshness',
    location: 'query',
    problem: 'invalid',
    value,
  });
}

/** Whether a responseFilter lets web pages in: no filter does, nor one that only excludes other answers. */
function letsWebPagesIn(filter: string | undefined): boolean {
  const answers = (filter ?? '').split(',').map((answer) => answer.trim().toLowerCase()).filter(Boolean);
  if (answers.includes(`-${BING_WEBPAGES_ANSWER}`)) return false;
  const included = answers.filter((answer) => !answer.startsWith('-'));
  return included.length === 0 || included.includes(BING_WEBPAGES_ANSWER);
}

function readSearch(input: DialectInput, tools: DialectTools) {
  const parameters = readQuery<Parameters>(parametersSchema, input.query);
  const { query, includeDomains, excludeDomains } = queryAndSites(parameters.q, 'q');
  return {
    request: webSearchRequest({
      query,
      count: Math.min(parameters.count ?? BING_DEFAULT_COUNT, BING_MAX_COUNT),
      offset: parameters.offset ?? 0,
      freshness: freshnessOf(parameters.freshness, tools.now()),
      includeDomains,
      excludeDomains,
      language: parameters.setLang ?? parameters.mkt ?? null,
    }),
    echo: {
      originalQuery: parameters.q,
      html: parameters.textFormat?.toLowerCase() === 'html',
      webPages: letsWebPagesIn(parameters.responseFilter),
    } satisfies Echo,
  };
}

function webPageOf(result: GatewayResult, index: number, origin: string, text: (plain: string) => string): BingWebPage {
  return {
    id: bingWebPageId(`${origin}${PREFIX}${BING_API_PATH}`, index),
    name: text(titleOf(result)),
    url: result.url,
    displayUrl: result.displayUrl,
    snippet: text(snippetOf(result)),
    ...(result.datePublished ? { datePublished: result.datePublished } : {}),
    ...(result.dateLastCrawled ? { dateLastCrawled: result.dateLastCrawled } : {}),
  };
}

// ---- errors -------------------------------------------------------------------------------------

/** Seconds as HH:MM:SS, the form API Management gives the time until a quota is replenished. */
function clockTime(totalSeconds: number): string {
  const [hours, minutes, seconds] = [Math.floor(totalSeconds / 3600), Math.floor(totalSeconds / 60) % 60, totalSeconds % 60];
  return [hours, minutes, seconds].map((part) => String(part).padStart(2, '0')).join(':');
}

/** API Management's body, for key, quota and rate errors: the status as a string. */
const apimReply = (status: number, message: string): { status: number; body: ApimErrorBody } => ({
  status,
  body: { error: { code: String(status), message } },
});

/** Bing's ErrorResponse with one error. */
const bingReply = (status: number, error: BingError): { status: number; body: BingErrorResponse } => ({
  status,
  body: { _type: 'ErrorResponse', errors: [error] },
});

/** A refused parameter as Bing names it: ParameterMissing, or ParameterInvalidValue with the value sent. */
function invalidRequest(error: ApiError): BingError {
  const details = error.details;
  if (details?.problem === 'missing') {
    return { code: 'InvalidRequest', subCode: 'ParameterMissing', message: vendorMessage(BING_MESSAGES.parameterMissing, error), parameter: details.parameter };
  }
  return {
    code: 'InvalidRequest',
    subCode: 'ParameterInvalidValue',
    message: vendorMessage(BING_MESSAGES.parameterInvalid, error),
    ...(details ? { parameter: details.parameter } : {}),
    ...(details?.value !== undefined ? { value: String(details.value) } : {}),
  };
}

/** The failure in the shape the real service gave it: API Management's for keys and limits, Bing's for the rest. */
function shapedFailure({ error, kind }: DialectFailure): { status: number; body: ApimErrorBody | BingErrorResponse } {
  // The 429s of the account's limits say when to come back; their Retry-After is in whole seconds.
  const retrySeconds = () => Number(error.headers['Retry-After']);
  switch (kind) {
    case 'missing_key':
      return apimReply(401, vendorMessage(BING_MESSAGES.keyMissing, error));
    case 'invalid_key':
      return apimReply(401, vendorMessage(BING_MESSAGES.keyInvalid, error));
    case 'disabled_account':
      return apimReply(403, error.message);
    case 'allowance_exhausted':
      // Bing answered a spent per-day or per-month quota with 403.
      return apimReply(403, vendorMessage(BING_MESSAGES.quotaExceeded(clockTime(retrySeconds())), error));
    case 'rate_limited':
      return apimReply(429, vendorMessage(BING_MESSAGES.rateLimited(retrySeconds()), error));
    case 'invalid_request':
      return bingReply(400, invalidRequest(error));
    case 'not_found':
    case 'method_not_allowed':
    case 'too_large':
    case 'unsupported_media_type':
      return bingReply(error.status, { code: 'InvalidRequest', message: error.message });
    case 'not_implemented':
      return bingReply(error.status, { code: 'ServerError', subCode: 'NotImplemented', message: error.message });
    case 'upstream_failure':
    case 'upstream_unavailable':
      return bingReply(error.status, { code: 'ServerError', subCode: 'ResourceError', message: error.message });
    case 'upstream_timeout':
    case 'internal':
      return bingReply(error.status, { code: 'ServerError', subCode: 'UnexpectedError', message: error.message });
  }
}

function bingErrors(failure: DialectFailure): ErrorReply {
  const { status, body } = shapedFailure(failure);
  // The status line names searchgate's reason: the vendor's long sentences before it would fill the 80 characters.
  return { status, body, reason: reasonPhrase(status, failure.error.message) };
}

export const bingDialect: Dialect = {
  name: 'bing',
  prefixes: [PREFIX],
  keys: [{ in: 'header', name: BING_KEY_HEADER }, { in: 'bearer' }],
  keyHint: `send "${BING_KEY_HEADER}: <API_KEY>" (or "Authorization: Bearer <API_KEY>")`,
  renderError: bingErrors,
  routes: [
    searchRoute<Echo>({
      operation: 'search',
      methods: ['GET'],
      path: `${PREFIX}${BING_SEARCH_PATH}`,
      read: readSearch,
      render({ request, echo, outcome, origin }): BingSearchResponse {
        const text = echo.html ? escapeHtml : (plain: string) => plain;
        const value = echo.webPages ? outcome.results.map((result, i) => webPageOf(result, i, origin, text)) : [];
        return {
          _type: 'SearchResponse',
          queryContext: { originalQuery: echo.originalQuery },
          ...(value.length ? { webPages: { webSearchUrl: null, totalEstimatedMatches: totalMatches(outcome, request.offset), value } } : {}),
        };
      },
      docs: { summary: 'Bing Web Search v7: the webPages answer only', parameters: parametersSchema },
    }),
  ],
};
