/**
 * Google's Custom Search JSON API v1 (Programmable Search Engine) as searchgate serves it to
 * Google's clients (google-api-python-client, LangChain's GoogleSearchAPIWrapper, litellm's
 * `google_pse`): ../shared/spec/dialects.md §5.7, §6.10, §7.10.
 *
 * Served: GET /google/customsearch/v1 and GET /google/customsearch/v1/siterestrict, alike. The key is
 * the `key` query parameter, else an X-Goog-Api-Key header, else `Authorization: Bearer`. A key in the
 * URL is never echoed (queries.request has no key, url.template only placeholders) and never logged
 * (the access log writes key=[REDACTED]).
 *
 * Pointing a client here: `build("customsearch", "v1", developerKey=KEY,
 * client_options={"api_endpoint": BASE + "/google"})`; LangChain's wrapper builds its own service,
 * so its `search_engine` is replaced by that one after construction; litellm reads
 * GOOGLE_PSE_API_BASE = BASE + "/google/customsearch/v1".
 *
 * Honoured: q (site: operators become domain filters: R8), cx (required, any value: searchgate has one
 * index for every engine id), num (1..10), start (offset start − 1: R10; no result past the 100th, as
 * Google), dateRestrict (d|w|m|y[N]) and sort=date:r:YYYYMMDD:YYYYMMDD (R9; the range wins when both
 * are given; other sort expressions are ignored), siteSearch with siteSearchFilter (i, the default, or
 * e), exactTerms and excludeTerms (appended to the query as "…" and -…), lr (lang_xx). Refused:
 * searchType=image (no image search) and any alt but json. Accepted and ignored: hl, gl, cr, safe,
 * filter, fileType, orTerms, c2coff, fields, prettyPrint, quotaUser and any other parameter.
 *
 * Answers are Google's Search resource: searchInformation.totalResults is the upstream's estimate,
 * else the results counted (a string, as Google's); titles and snippets are plain text, escaped for
 * the html* fields (no hit markup); a dated result carries its date as
 * pagemap.metatags[0]["article:published_time"]. Errors are Google's error model with §7.10's
 * statuses: a wrong or deleted key is 400 INVALID_ARGUMENT with the ErrorInfo API_KEY_INVALID that
 * google-api-python-client reports as error_details.
 */
import { badRequest, type ErrorKind } from '../../api/errors.js';
import { utcDayStart, type Freshness } from '../../api/freshness.js';
import { webSearchRequest } from '../../api/validate.js';
import { reasonPhrase, vendorMessage } from '../../dialects/errors.js';
import { escapeHtml } from '../../dialects/html.js';
import { IGNORED_PARAMETER, readQuery, type ParameterSchema } from '../../dialects/params.js';
import { dateRange, lastPeriods, mergeDomains, queryAndSites, snippetOf, titleOf, totalMatches, type Period } from '../../dialects/search.js';
import { searchRoute, type Dialect, type DialectFailure, type DialectRoute, type ErrorReply } from '../../dialects/types.js';
import {
  GOOGLE_DATE_RANGE_SORT,
  GOOGLE_DATE_RESTRICT,
  GOOGLE_ERROR_INFO_TYPE,
  GOOGLE_KEY_HEADER,
  GOOGLE_LR_PREFIX,
  GOOGLE_MAX_NUM,
  GOOGLE_MAX_RESULTS,
  GOOGLE_PUBLISHED_METATAG,
  GOOGLE_SEARCH_PATH,
  GOOGLE_SITERESTRICT_PATH,
  isoDayOfCompactDay,
  languageOfGoogleCode,
  type GoogleErrorBody,
  type GoogleErrorInfo,
  type GoogleQuery,
  type GoogleResult,
  type GoogleSearchParameters,
  type GoogleSearchResponse,
} from './wire.js';

const PREFIX = '/google';
const ENGINE_TITLE = 'searchgate';


const parametersSchema: ParameterSchema = {
  type: 'object',
  required: ['q', 'cx'],
  properties: {
    q: { type: 'string', pattern: '\\S', description: 'The query; site:x and -site:x become domain filters.' },
    cx: { type: 'string', description: 'Required; any engine id is accepted: searchgate searches one index for all.' },
    num: { type: 'integer', minimum: 1, maximum: GOOGLE_MAX_NUM, default: GOOGLE_MAX_NUM, description: 'Results per page, 1 to 10.' },
    start: { type: 'integer', minimum: 1, default: 1, description: `Index of the first result; none past the ${GOOGLE_MAX_RESULTS}th is served.` },
    dateRestrict: { type: 'string', pattern: GOOGLE_DATE_RESTRICT.source, description: 'd[N], w[N], m[N] or y[N]: the last N days, weeks, months (31 days) or years (366 days).' },
    sort: { type: 'string', description: 'date:r:YYYYMMDD:YYYYMMDD restricts to a range of days; other sort expressions are ignored.' },
    siteSearch: { type: 'string', description: 'A site to include (siteSearchFilter i, the default) or exclude (e).' },
    siteSearchFilter: { type: 'string', enum: ['i', 'e', 'siteSearchFilterUndefined'] },
    exactTerms: { type: 'string', description: 'Appended to the query as a quoted phrase.' },
    excludeTerms: { type: 'string', description: 'Appended to the query as a -term.' },
    lr: { type: 'string', pattern: `^${GOOGLE_LR_PREFIX}[A-Za-z]{2,3}(-[A-Za-z]{2})?$`, description: 'Preferred result language: lang_en, lang_zh-TW, …' },
    searchType: { type: 'string', description: 'image is refused: searchgate has no image search.' },
    alt: { type: 'string', enum: ['json'], description: 'json only.' },
    hl: IGNORED_PARAMETER,
    gl: IGNORED_PARAMETER,
    cr: IGNORED_PARAMETER,
    safe: IGNORED_PARAMETER,
    filter: IGNORED_PARAMETER,
    fileType: IGNORED_PARAMETER,
    orTerms: IGNORED_PARAMETER,
    c2coff: IGNORED_PARAMETER,
    fields: IGNORED_PARAMETER,
    prettyPrint: IGNORED_PARAMETER,
    quotaUser: IGNORED_PARAMETER,
  },
};

/** What the answer repeats of the request: its terms, engine id, page, and the filters it honoured. */
interface Echo {
  q: string;
  cx: string;
  num: number;
  start: number;
  filters: Pick<GoogleQuery, 'dateRestrict' | 'sort' | 'siteSearch' | 'siteSearchFilter' | 'exactTerms' | 'excludeTerms' | 'language'>;
  path: string;
}

const DATE_RESTRICT_PERIODS: Readonly<Record<string, Period>> = { d: 'day', w: 'week', m: 'month', y: 'year' };

const invalid = (parameter: string, value: unknown, problem: string) => badRequest(`${parameter}: ${problem}`, { parameter, location: 'query', problem: 'invalid', value });

/** The freshness of dateRestrict and of a date-range sort (which wins); undefined for none. */
function freshnessOf(parameters: GoogleSearchParameters, nowMs: number): Freshness | undefined {
  if (parameters.sort?.startsWith('date:r')) {
    const range = GOOGLE_DATE_RANGE_SORT.exec(parameters.sort);
    const day = (compact: string | undefined) => {
      if (compact === undefined) return undefined;
      const iso = isoDayOfCompactDay(compact);
      if (utcDayStart(iso) === null) throw invalid('sort', parameters.sort, `${compact} is not a date YYYYMMDD`);
      return iso;
    };
    if (!range) throw invalid('sort', parameters.sort, 'a date range is date:r:YYYYMMDD:YYYYMMDD');
    return dateRange(day(range[1]), day(range[2]), nowMs, { parameter: 'sort', location: 'query' });
  }
  if (!parameters.dateRestrict) return undefined;
  const [, unit, count] = GOOGLE_DATE_RESTRICT.exec(parameters.dateRestrict)!;
  return lastPeriods(count ? Number(count) : 1, DATE_RESTRICT_PERIODS[unit!]!, nowMs);
}

/** Google's refusal of num outside 1..10, in the discovery document's words, before the schema's. */
function checkNum(raw: string | string[] | undefined) {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value !== undefined && /^\s*-?\d+\s*$/.test(value) && (Number(value) < 1 || Number(value) > GOOGLE_MAX_NUM)) {
    throw invalid('num', value, `Valid values are integers between 1 and ${GOOGLE_MAX_NUM}, inclusive`);
  }
}

function readSearch(query: Record<string, string | string[] | undefined>, path: string, nowMs: number) {
  checkNum(query.num);
  const parameters = readQuery<GoogleSearchParameters>(parametersSchema, query);
  if (parameters.searchType === 'image') throw invalid('searchType', 'image', 'searchgate has no image search');
  const num = parameters.num ?? GOOGLE_MAX_NUM;
  const start = parameters.start ?? 1;
  if (start + num - 1 > GOOGLE_MAX_RESULTS) {
    throw invalid('start', start, `start + num − 1 may not exceed ${GOOGLE_MAX_RESULTS}: the API returns no result past the ${GOOGLE_MAX_RESULTS}th`);
  }
  const excluded = parameters.excludeTerms?.trim();
  const terms = [
    parameters.q,
    parameters.exactTerms?.trim() ? `"${parameters.exactTerms.trim()}"` : '',
    excluded ? (/\s/.test(excluded) ? `-"${excluded}"` : `-${excluded}`) : '',
  ];
  const sites = queryAndSites(terms.filter(Boolean).join(' '), 'q');
  const site = parameters.siteSearch?.trim() ? [parameters.siteSearch.trim()] : [];
  const excludeSite = parameters.siteSearchFilter === 'e';
  const freshness = freshnessOf(parameters, nowMs);
  const echo: Echo = {
    q: parameters.q,
    cx: parameters.cx,
    num,
    start,
    filters: {
      dateRestrict: parameters.dateRestrict,
      sort: parameters.sort,
      siteSearch: parameters.siteSearch,
      siteSearchFilter: parameters.siteSearchFilter,
      exactTerms: parameters.exactTerms,
      excludeTerms: parameters.excludeTerms,
      language: parameters.lr,
    },
    path,
  };
  return {
    request: webSearchRequest({
      query: sites.query,
      count: num,
      offset: start - 1,
      includeDomains: mergeDomains(sites.includeDomains, excludeSite ? [] : site),
      excludeDomains: mergeDomains(sites.excludeDomains, excludeSite ? site : []),
      language: parameters.lr ? languageOfGoogleCode(parameters.lr.slice(GOOGLE_LR_PREFIX.length)) : null,
      ...(freshness ? { freshness } : {}),
    }),
    echo,
  };
}

function itemOf(result: Parameters<typeof titleOf>[0]): GoogleResult {
  const title = titleOf(result);
  const snippet = snippetOf(result);
  let displayLink = '';
  try {
    displayLink = new URL(result.url).hostname;
  } catch {
    // A result URL that does not parse has no host to show.
  }
  return {
    kind: 'customsearch#result',
    title,
    htmlTitle: escapeHtml(title),
    link: result.url,
    displayLink,
    snippet,
    htmlSnippet: escapeHtml(snippet),
    formattedUrl: result.displayUrl,
    htmlFormattedUrl: escapeHtml(result.displayUrl),
    ...(result.datePublished ? { pagemap: { metatags: [{ [GOOGLE_PUBLISHED_METATAG]: result.datePublished }] } } : {}),
  };
}

function searchRouteAt(path: string): DialectRoute {
  return searchRoute<Echo>({
    operation: 'search',
    methods: ['GET'],
    path: `${PREFIX}${path}`,
    read: (input, tools) => readSearch(input.query, path, tools.now()),
    render({ request, echo, outcome, elapsedMs, origin }): GoogleSearchResponse {
      const total = totalMatches(outcome, request.offset);
      const query = (startIndex: number): GoogleQuery => ({
        title: ENGINE_TITLE,
        totalResults: String(total),
        searchTerms: echo.q,
        count: echo.num,
        startIndex,
        inputEncoding: 'utf8',
        outputEncoding: 'utf8',
        safe: 'off',
        cx: echo.cx,
        ...echo.filters,
      });
      const next = echo.start + echo.num;
      const hasNextPage = outcome.results.length === echo.num && next + echo.num - 1 <= GOOGLE_MAX_RESULTS;
      const seconds = elapsedMs / 1000;
      return {
        kind: 'customsearch#search',
        url: {
          type: 'application/json',
          template: `${origin}${PREFIX}${echo.path}?q={searchTerms}&num={count?}&start={startIndex?}&cx={cx?}&key={key?}&alt=json`,
        },
        queries: { request: [query(echo.start)], ...(hasNextPage ? { nextPage: [query(next)] } : {}) },
        context: { title: ENGINE_TITLE },
        searchInformation: {
          searchTime: Math.round(seconds * 1e6) / 1e6,
          formattedSearchTime: seconds.toFixed(2),
          totalResults: String(total),
          formattedTotalResults: total.toLocaleString('en-US'),
        },
        ...(outcome.results.length ? { items: outcome.results.map(itemOf) } : {}),
      };
    },
    docs: { summary: 'Google Custom Search JSON API v1: cse.list', parameters: parametersSchema },
  });
}

// ---- errors: Google's error model (§7.10) -------------------------------------------------------

interface GoogleErrorForm {
  status: number;
  /** The canonical code's name (google.rpc.Code). */
  code: string;
  /** The older per-error reason. */
  reason: string;
  /** Google's sentence, before searchgate's reason. */
  sentence?: string;
  /** The ErrorInfo reason, where Google sends one. */
  errorInfo?: string;
}

const QUOTA = (limit: string) => `Quota exceeded for quota metric 'Queries' and limit '${limit}'.`;

const ERROR_FORMS: Partial<Record<ErrorKind, GoogleErrorForm>> = {
  missing_key: {
    status: 403,
    code: 'PERMISSION_DENIED',
    reason: 'forbidden',
    sentence:
      "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
  },
  invalid_key: { status: 400, code: 'INVALID_ARGUMENT', reason: 'badRequest', sentence: 'API key not valid. Please pass a valid API key.', errorInfo: 'API_KEY_INVALID' },
  disabled_account: { status: 403, code: 'PERMISSION_DENIED', reason: 'forbidden', sentence: 'Permission denied: Consumer has been suspended.', errorInfo: 'CONSUMER_SUSPENDED' },
  invalid_request: { status: 400, code: 'INVALID_ARGUMENT', reason: 'badRequest', sentence: 'Request contains an invalid argument.' },
  not_found: { status: 404, code: 'NOT_FOUND', reason: 'notFound' },
  // google.rpc.Code has no "method not allowed"; UNIMPLEMENTED is the operation not being served.
  method_not_allowed: { status: 405, code: 'UNIMPLEMENTED', reason: 'methodNotAllowed' },
  allowance_exhausted: { status: 429, code: 'RESOURCE_EXHAUSTED', reason: 'rateLimitExceeded', sentence: QUOTA('Queries per day') },
  rate_limited: { status: 429, code: 'RESOURCE_EXHAUSTED', reason: 'rateLimitExceeded', sentence: QUOTA('Queries per minute') },
  upstream_failure: { status: 502, code: 'UNAVAILABLE', reason: 'backendError' },
  upstream_unavailable: { status: 503, code: 'UNAVAILABLE', reason: 'backendError' },
  upstream_timeout: { status: 504, code: 'DEADLINE_EXCEEDED', reason: 'backendError' },
  not_implemented: { status: 501, code: 'UNIMPLEMENTED', reason: 'notImplemented' },
};

/** Anything else: a 4xx is an invalid argument, a 5xx an internal error. */
const otherForm = (status: number): GoogleErrorForm =>
  status >= 500 ? { status, code: 'INTERNAL', reason: 'backendError' } : { status, code: 'INVALID_ARGUMENT', reason: 'badRequest' };

function googleErrors({ error, kind }: DialectFailure): ErrorReply {
  const form = ERROR_FORMS[kind] ?? otherForm(error.status);
  const message = vendorMessage(form.sentence, error);
  const details: GoogleErrorInfo[] | undefined = form.errorInfo
    ? [{ '@type': GOOGLE_ERROR_INFO_TYPE, reason: form.errorInfo, domain: 'googleapis.com', metadata: { service: 'customsearch.googleapis.com' } }]
    : undefined;
  const body: GoogleErrorBody = {
    error: { code: form.status, message, errors: [{ message, domain: 'global', reason: form.reason }], status: form.code, ...(details ? { details } : {}) },
  };
  return { status: form.status, body, reason: reasonPhrase(form.status, error.message) };
}

export const googleDialect: Dialect = {
  name: 'google',
  prefixes: [PREFIX],
  keys: [{ in: 'query', name: 'key' }, { in: 'header', name: GOOGLE_KEY_HEADER }, { in: 'bearer' }],
  keyHint: 'send key=<API_KEY> in the query string, an X-Goog-Api-Key header or "Authorization: Bearer <API_KEY>"',
  renderError: googleErrors,
  routes: [searchRouteAt(GOOGLE_SEARCH_PATH), searchRouteAt(GOOGLE_SITERESTRICT_PATH)],
};
