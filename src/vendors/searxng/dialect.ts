/**
 * SearXNG's JSON search API as searchgate serves it to SearXNG's clients (LangChain's
 * SearxSearchWrapper, litellm's `searxng` search provider): ../shared/spec/dialects.md §5.4, §7.7.
 *
 * Served: GET and POST /searxng/search, and /searxng/{key}/search for clients that cannot send a
 * header. SearXNG answers its root with a redirect to /search; here GET /searxng and GET
 * /searxng/{key} are searched directly when they carry q (404 without it), because a redirect's
 * Location would send a path-borne key back to the client (R3). The key is the path segment, else
 * `Authorization: Bearer`; logs show the segment as [REDACTED] and metrics only the route template.
 *
 * Pointing a client here: LangChain `SearxSearchWrapper(searx_host=BASE + "/searxng/search",
 * headers={"Authorization": "Bearer " + KEY})` or `searx_host=BASE + "/searxng/" + KEY + "/search"`;
 * litellm `search(…, search_provider="searxng", api_base=BASE + "/searxng", api_key=KEY)`.
 *
 * Parameters come from the query string, or for a POST from form fields or a JSON body (the body
 * winning, as SearXNG merges them). q (site: operators become domain filters, R8), format (json
 * only: anything else is 403, as an instance that has not enabled that format), pageno (pages of 10:
 * offset (pageno − 1) × 10, R10), time_range (day, week, month, year: R9) and language (all and auto
 * mean none) are honoured; categories, engines, safesearch, image_proxy, enabled_plugins and any
 * other parameter are accepted and ignored.
 *
 * Answers carry SearXNG's JSON keys with honest defaults (R6): engine "searchgate", category
 * "general", a score that is the rerank score or else rank-derived (not a probability), no answers,
 * corrections, infoboxes or suggestions. An upstream failure is a 502/503/504 error, never SearXNG's
 * "200 with unresponsive_engines", which clients would read as "nothing found". Errors are
 * SearXNG's `{"error": "…"}` body (searx/webapp.py `index_error`) with §7.7's statuses.
 */
import { ApiError, badRequest } from '../../api/errors.js';
import { parseFreshness } from '../../api/freshness.js';
import { DEFAULT_COUNT } from '../../api/schemas.js';
import { webSearchRequest } from '../../api/validate.js';
import { reasonPhrase, servedRoutes } from '../../dialects/errors.js';
import { readQuery, type ParameterSchema } from '../../dialects/params.js';
import { PERIOD_PRESET, queryAndSites, relevanceScores, snippetOf, titleOf, totalMatches } from '../../dialects/search.js';
import { searchRoute, type Dialect, type DialectFailure, type DialectInput, type ErrorReply } from '../../dialects/types.js';
import {
  SEARXNG_ANY_LANGUAGE,
  SEARXNG_DEFAULT_TEMPLATE,
  SEARXNG_GENERAL_CATEGORY,
  SEARXNG_JSON_FORMAT,
  SEARXNG_NO_QUERY,
  SEARXNG_TIME_RANGES,
  type SearxngError,
  type SearxngResponse,
  type SearxngResult,
  type SearxngTimeRange,
} from './wire.js';

/** SearXNG has no page size; its pages are searchgate's default count. */
const PAGE_SIZE = DEFAULT_COUNT;
const ENGINE = 'searchgate';

const MISSING_KEY = 'missing API key: put it in the path (/searxng/{key}/search) or send Authorization: Bearer <key>';

const IGNORED = { description: 'Accepted and ignored.' };

const parametersSchema: ParameterSchema = {
  type: 'object',
  properties: {
    q: { type: 'string', description: 'The query; site:x and -site:x become domain filters. Required: "No query" (400) without it.' },
    format: { type: 'string', enum: [SEARXNG_JSON_FORMAT], description: 'Must be json; any other format is 403, as on an instance that has not enabled it.' },
    pageno: { type: 'integer', minimum: 1, default: 1, description: `Page number; pages hold ${PAGE_SIZE} results.` },
    time_range: { type: 'string', enum: ['', ...SEARXNG_TIME_RANGES], description: 'Only results from the last day, week, month (31 days) or year (366 days).' },
    language: {
      type: 'string',
      pattern: '^(all|auto|[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*)?$',
      description: 'Preferred result language (en, pt-BR); all or auto for none.',
    },
    categories: IGNORED,
    engines: IGNORED,
    safesearch: IGNORED,
    image_proxy: IGNORED,
    enabled_plugins: IGNORED,
    disabled_plugins: IGNORED,
    enabled_engines: IGNORED,
    disabled_engines: IGNORED,
  },
};

interface SearxngParameters {
  q: string;
  pageno?: number;
  time_range?: SearxngTimeRange | '';
  language?: string;
}

interface Echo {
  query: string;
}

type Fields = Record<string, string | string[] | undefined>;

/**
 * The request's parameters as strings, as SearXNG reads them: the query string, overlaid with the
 * form fields or JSON body of a POST (a JSON number or boolean read as its text).
 */
function fieldsOf(input: DialectInput): Fields {
  const fields: Fields = { ...input.query };
  for (const [name, value] of Object.entries(input.body)) {
    if (value === null || value === undefined) continue;
    fields[name] = Array.isArray(value) ? value.map(String) : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return fields;
}

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/**
 * SearXNG's checks in its order (searx/webapp.py `search()`): the format first (403 when not
 * enabled), then the query ("No query"), then the other parameters. `searchOnlyWithQuery`: the
 * root paths, which are a search only when q is present.
 */
function readSearch(input: DialectInput, searchOnlyWithQuery: boolean) {
  const fields = fieldsOf(input);
  const q = first(fields.q)?.trim();
  if (searchOnlyWithQuery && !q) {
    throw new ApiError(404, `GET /searxng and /searxng/{key} search only with a q parameter; searchgate serves ${servedRoutes(searxngDialect)} here`);
  }
  const format = first(fields.format);
  if (format !== SEARXNG_JSON_FORMAT) {
    const asked = format === undefined ? 'format html (the default)' : `format=${format}`;
    throw new ApiError(403, `${asked} is not enabled: searchgate serves SearXNG's JSON output only; send format=json`, {}, { kind: 'invalid_request' });
  }
  if (!q) throw badRequest(SEARXNG_NO_QUERY, { parameter: 'q', location: 'query', problem: 'missing' });
  const parameters = readQuery<SearxngParameters>(parametersSchema, fields);
  const { query, includeDomains, excludeDomains } = queryAndSites(parameters.q, 'q');
  const language = parameters.language && !(SEARXNG_ANY_LANGUAGE as readonly string[]).includes(parameters.language) ? parameters.language : null;
  return {
    request: webSearchRequest({
      query,
      count: PAGE_SIZE,
      offset: ((parameters.pageno ?? 1) - 1) * PAGE_SIZE,
      includeDomains,
      excludeDomains,
      language,
      ...(parameters.time_range ? { freshness: parseFreshness(PERIOD_PRESET[parameters.time_range]) } : {}),
    }),
    echo: { query: parameters.q },
  };
}

/** Python's urlparse of a URL: scheme, netloc, path, params (after a ; in the last segment), query, fragment. */
function parsedUrl(url: string): SearxngResult['parsed_url'] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return ['', '', url, '', '', ''];
  }
  const lastSegment = parsed.pathname.lastIndexOf('/');
  const semicolon = parsed.pathname.indexOf(';', lastSegment);
  const [path, params] = semicolon < 0 ? [parsed.pathname, ''] : [parsed.pathname.slice(0, semicolon), parsed.pathname.slice(semicolon + 1)];
  return [parsed.protocol.replace(/:$/, ''), parsed.host, path, params, parsed.search.replace(/^\?/, ''), parsed.hash.replace(/^#/, '')];
}

function searxngErrors({ error, kind }: DialectFailure): ErrorReply {
  const message = kind === 'missing_key' ? MISSING_KEY : error.message;
  const body: SearxngError = { error: message };
  return { status: error.status, body, reason: reasonPhrase(error.status, message) };
}

function searchRouteAt(path: string, methods: ReadonlyArray<'GET' | 'POST'>, searchOnlyWithQuery: boolean) {
  return searchRoute<Echo>({
    operation: 'search',
    methods,
    path,
    // SearXNG reads a POST's form fields; litellm-style clients may post JSON.
    bodyTypes: ['json', 'form'],
    read: (input) => readSearch(input, searchOnlyWithQuery),
    render({ request, echo, outcome }): SearxngResponse {
      const scores = relevanceScores(outcome);
      return {
        query: echo.query,
        number_of_results: totalMatches(outcome, request.offset),
        results: outcome.results.map((result, i) => ({
          url: result.url,
          title: titleOf(result),
          content: snippetOf(result),
          engine: ENGINE,
          engines: [ENGINE],
          category: SEARXNG_GENERAL_CATEGORY,
          publishedDate: result.datePublished ?? null,
          positions: [request.offset + i + 1],
          score: scores[i]!,
          parsed_url: parsedUrl(result.url),
          template: SEARXNG_DEFAULT_TEMPLATE,
        })),
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [],
        unresponsive_engines: [],
      };
    },
    docs: {
      summary: searchOnlyWithQuery
        ? 'SearXNG search at the instance root: served as /search when q is present (never a redirect), 404 without q'
        : 'SearXNG search (format=json), pages of 10',
      parameters: parametersSchema,
      ...(methods.includes('POST') ? { body: parametersSchema } : {}),
    },
  });
}

export const searxngDialect: Dialect = {
  name: 'searxng',
  prefixes: ['/searxng'],
  keys: [{ in: 'path', param: 'key' }, { in: 'bearer' }],
  keyHint: 'put it in the path (/searxng/{key}/search) or send "Authorization: Bearer <API_KEY>"',
  renderError: searxngErrors,
  // The segment after /searxng/ is a key unless it is the literal search route.
  redactPath: (path) => path.replace(/^(\/+searxng\/+)(?!search(?:\/|$))[^/]+/i, '$1[REDACTED]'),
  // /searxng/search first: the router tries routes in order, and "search" is no key.
  routes: [
    searchRouteAt('/searxng/search', ['GET', 'POST'], false),
    searchRouteAt('/searxng/:key/search', ['GET', 'POST'], false),
    searchRouteAt('/searxng', ['GET'], true),
    searchRouteAt('/searxng/:key', ['GET'], true),
  ],
};
