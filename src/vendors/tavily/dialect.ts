/**
 * Tavily's API as searchgate serves it to Tavily's clients (../shared/spec/dialects.md §5.1, §7.4):
 * POST /tavily/search (web search) and POST /tavily/extract (page content). A client is pointed here
 * by its base URL alone: tavily-python `TavilyClient(api_key=KEY, api_base_url=BASE + "/tavily")`,
 * @tavily/core `tavily({ apiKey: KEY, apiBaseURL: BASE + "/tavily" })`, litellm
 * `search(search_provider="tavily", api_base=BASE + "/tavily")`, LangChain's TavilySearchAPIWrapper
 * through its module constant `TAVILY_API_URL = BASE + "/tavily"`.
 *
 * The key is a Bearer key, else the body's `api_key` (LangChain's wrapper sends no header); a body
 * key is taken out before anything reads the body (R3). Keyless mode (no key at all) is a 401.
 *
 * Honest defaults (R6): `answer` is null (searchgate generates no answers), `images` [], favicons
 * null, `follow_up_questions` null; `score` is the rerank score when searchgate reranked, else
 * rank-derived ((n − i) / n, not a probability); `usage.credits` is the allowance units charged.
 * Raw content is searchgate's plain page text whatever format is asked, capped at
 * dialects.tavily.rawContentMaxCharacters code points (Tavily has no cap).
 *
 * Accepted and ignored: search_depth, chunks_per_source, auto_parameters, exact_match, country,
 * include_domains_mode, max_age_hours, max_hours, fetch_timeout, cache_fallback, filter_by_language,
 * timeout (search), include_answer and include_images (beyond their defaults), extract_depth, format,
 * query and chunks_per_source (extract); `days` unless the topic is news.
 *
 * Extract: each page's text in `results`; each page without text in `failed_results`, with why in
 * words (not found and the page's status, timed out, blocked, failed). `timeout` (seconds) bounds the
 * wait, within content.timeBudgetMs. Charged accounts.weights.content once per request.
 *
 * Errors are `{"detail": {"error": M}}`, as tavily-python and @tavily/core read them, with Tavily's
 * statuses: 401 for a key, 432 for a spent allowance (the plan limit), 429 for a rate limit.
 *
 * Sources: Tavily's API reference (search, extract) and its HTTP errors article, tavily-python 0.8.5,
 * @tavily/core 0.7.13 and langchain-community 0.4.2, as cited in wire.ts.
 */
import { parseFreshness, type Freshness } from '../../api/freshness.js';
import { webSearchRequest, type WebSearchRequest } from '../../api/validate.js';
import { tabledFailure, type ErrorTable } from '../../dialects/error-table.js';
import { ignoredParameters, readBody, type ParameterSchema } from '../../dialects/params.js';
import { dateRange, lastPeriods, mergeDomains, PERIOD_PRESET, relevanceScores, snippetOf, titleOf } from '../../dialects/search.js';
import { contentRoute, searchRoute, type Dialect, type DialectFailure, type ErrorReply, type Served } from '../../dialects/types.js';
import type { ContentOutcome, ContentRequest } from '../../gateway/content.js';
import type { SearchOutcome } from '../../gateway/search.js';
import {
  failedResultError,
  TAVILY_DEFAULT_MAX_RESULTS,
  TAVILY_MAX_EXTRACT_URLS,
  TAVILY_MAX_RESULTS,
  TAVILY_MESSAGES,
  TAVILY_PLAN_LIMIT_STATUS,
  TAVILY_TIME_RANGES,
  TAVILY_TOPICS,
  type TavilyErrorBody,
  type TavilyExtractRequest,
  type TavilyExtractResponse,
  type TavilySearchRequest,
  type TavilySearchResponse,
  type TavilyUsage,
} from './wire.js';


const searchSchema: ParameterSchema = {
  type: 'object',
  required: ['query'],
  properties: {
    query: { type: 'string', pattern: '\\S', description: 'The search query' },
    max_results: { type: 'integer', minimum: 0, description: `Results wanted, 0..${TAVILY_MAX_RESULTS} (default ${TAVILY_DEFAULT_MAX_RESULTS}); more is served as ${TAVILY_MAX_RESULTS}; 0 returns none` },
    include_domains: { type: 'array', items: { type: 'string' }, description: 'Only results from these domains (and their subdomains)' },
    exclude_domains: { type: 'array', items: { type: 'string' }, description: 'No results from these domains' },
    time_range: { type: 'string', enum: Object.keys(TAVILY_TIME_RANGES), description: 'Published within the last day, week, month or year' },
    start_date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Published on or after this UTC day (YYYY-MM-DD); wins over time_range and days' },
    end_date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Published on or before this UTC day (YYYY-MM-DD)' },
    days: { type: 'integer', minimum: 1, description: 'Published within the last N days; honoured for the news topic only' },
    topic: { type: 'string', enum: [...TAVILY_TOPICS], description: 'Only gates days' },
    include_raw_content: { type: ['boolean', 'string'], enum: [true, false, 'markdown', 'text'], description: 'Page text per result, as plain text whatever the format' },
    include_answer: { type: ['boolean', 'string'], enum: [true, false, 'basic', 'advanced'], description: 'Accepted; answer is always null (searchgate generates no answers)' },
    include_images: { type: 'boolean', description: 'Accepted; images is always []' },
    include_image_descriptions: { type: 'boolean', description: 'Accepted; images is always []' },
    include_favicon: { type: 'boolean', description: 'favicon: null on each result' },
    include_usage: { type: 'boolean', description: 'usage.credits: the allowance units charged' },
    language: { type: 'string', description: 'BCP 47 tag of the results wanted' },
    api_key: { type: 'string', description: 'The key, where no Authorization header is sent' },
    ...ignoredParameters(
      'search_depth',
      'chunks_per_source',
      'auto_parameters',
      'exact_match',
      'country',
      'include_domains_mode',
      'max_age_hours',
      'max_hours',
      'fetch_timeout',
      'cache_fallback',
      'filter_by_language',
      'timeout',
    ),
  },
};

const extractSchema: ParameterSchema = {
  type: 'object',
  required: ['urls'],
  properties: {
    urls: {
      type: ['string', 'array'],
      items: { type: 'string' },
      minLength: 1,
      minItems: 1,
      maxItems: TAVILY_MAX_EXTRACT_URLS,
      description: `A URL, or 1..${TAVILY_MAX_EXTRACT_URLS} of them`,
    },
    timeout: { type: 'number', exclusiveMinimum: 0, description: 'Seconds to wait for the pages, at most content.timeBudgetMs' },
    format: { type: 'string', enum: ['markdown', 'text'], description: 'Accepted; the text is plain text either way' },
    extract_depth: { type: 'string', enum: ['basic', 'advanced'], description: 'Accepted, ignored' },
    include_images: { type: 'boolean', description: 'Accepted; images is always []' },
    include_favicon: { type: 'boolean', description: 'favicon: null on each result' },
    include_usage: { type: 'boolean', description: 'usage.credits: the allowance units charged' },
    api_key: { type: 'string', description: 'The key, where no Authorization header is sent' },
    ...ignoredParameters('query', 'chunks_per_source'),
  },
};

/** What the renderers need to remember of the request. */
interface SearchEcho {
  query: string;
  favicon: boolean;
  usage: boolean;
}

interface ExtractEcho {
  favicon: boolean;
  usage: boolean;
}

/** Tavily's own statuses and sentences; every other failure keeps searchgate's status and reason. */
const TAVILY_ERRORS: ErrorTable = {
  missing_key: { canonical: TAVILY_MESSAGES.unauthorized },
  invalid_key: { canonical: TAVILY_MESSAGES.unauthorized },
  allowance_exhausted: { status: TAVILY_PLAN_LIMIT_STATUS, canonical: TAVILY_MESSAGES.planLimit },
  rate_limited: { canonical: TAVILY_MESSAGES.rateLimited },
};

function renderTavilyError(failure: DialectFailure): ErrorReply {
  const { status, message, reason } = tabledFailure(TAVILY_ERRORS, failure);
  const body: TavilyErrorBody = { detail: { error: message } };
  return { status, body, reason };
}

/**
 * The date filter: start_date/end_date win, then days (news only: tavily-python's
 * get_search_context always sends days=7, which must not filter a general search), then time_range.
 */
function freshnessOf(body: TavilySearchRequest, nowMs: number): Freshness {
  if (body.start_date !== undefined || body.end_date !== undefined) {
    return dateRange(body.start_date, body.end_date, nowMs, { parameter: body.start_date !== undefined ? 'start_date' : 'end_date', location: 'body' });
  }
  if (body.days !== undefined && body.topic === 'news') return lastPeriods(body.days, 'day', nowMs);
  if (body.time_range !== undefined) return parseFreshness(PERIOD_PRESET[TAVILY_TIME_RANGES[body.time_range]!]);
  return parseFreshness('noLimit');
}

const usageOf = (units: number): TavilyUsage => ({ credits: units });
/** Seconds, to the hundredth, as Tavily reports them. */
const seconds = (ms: number) => Math.round(ms / 10) / 100;

function renderSearch({ request, echo, outcome, logId, units, elapsedMs }: Served<WebSearchRequest, SearchOutcome, SearchEcho>): TavilySearchResponse {
  const scores = relevanceScores(outcome);
  return {
    query: echo.query,
    follow_up_questions: null,
    answer: null,
    images: [],
    results: outcome.results.map((result, i) => ({
      title: titleOf(result),
      url: result.url,
      content: snippetOf(result),
      score: scores[i]!,
      raw_content: request.text ? (result.text ?? null) : null,
      ...(result.datePublished ? { published_date: result.datePublished } : {}),
      ...(echo.favicon ? { favicon: null } : {}),
    })),
    response_time: seconds(elapsedMs),
    request_id: logId,
    ...(echo.usage ? { usage: usageOf(units) } : {}),
  };
}

function renderExtract({ echo, outcome, logId, units, elapsedMs }: Served<ContentRequest, ContentOutcome, ExtractEcho>): TavilyExtractResponse {
  const response: TavilyExtractResponse = { results: [], failed_results: [], response_time: seconds(elapsedMs), request_id: logId };
  for (const page of outcome.pages) {
    if ('failure' in page) {
      response.failed_results.push({ url: page.url, error: failedResultError(page) });
    } else {
      response.results.push({
        url: page.url,
        ...(page.page.title ? { title: page.page.title } : {}),
        raw_content: page.page.text,
        images: [],
        ...(echo.favicon ? { favicon: null } : {}),
      });
    }
  }
  if (echo.usage) response.usage = usageOf(units);
  return response;
}

export const tavilyDialect: Dialect = {
  name: 'tavily',
  prefixes: ['/tavily'],
  keys: [{ in: 'bearer' }, { in: 'body', field: 'api_key' }],
  keyHint: 'send Authorization: Bearer <key> or api_key',
  renderError: renderTavilyError,
  routes: [
    searchRoute<SearchEcho>({
      operation: 'search',
      methods: ['POST'],
      path: '/tavily/search',
      read(input, tools) {
        const body = readBody<TavilySearchRequest>(searchSchema, input.body);
        const request = webSearchRequest({
          query: body.query,
          // max_results 0 asks the gateway for no results.
          count: Math.min(body.max_results ?? TAVILY_DEFAULT_MAX_RESULTS, TAVILY_MAX_RESULTS),
          freshness: freshnessOf(body, tools.now()),
          includeDomains: mergeDomains(body.include_domains),
          excludeDomains: mergeDomains(body.exclude_domains),
          text: body.include_raw_content ? { maxCharacters: tools.settings.tavilyRawContentMaxCharacters } : null,
          language: body.language ?? null,
        });
        return {
          request,
          echo: { query: body.query, favicon: body.include_favicon === true, usage: body.include_usage === true },
        };
      },
      render: renderSearch,
      docs: { summary: 'Tavily search: ranked results with snippets, and page text on request', body: searchSchema },
    }),
    contentRoute<ExtractEcho>({
      operation: 'content',
      methods: ['POST'],
      path: '/tavily/extract',
      read(input, tools) {
        const body = readBody<TavilyExtractRequest>(extractSchema, input.body);
        return {
          request: {
            urls: typeof body.urls === 'string' ? [body.urls] : body.urls,
            maxCharacters: tools.settings.tavilyRawContentMaxCharacters,
            timeBudgetMs: body.timeout === undefined ? null : Math.min(Math.ceil(body.timeout * 1000), tools.settings.contentTimeBudgetMs),
          },
          echo: { favicon: body.include_favicon === true, usage: body.include_usage === true },
        };
      },
      render: renderExtract,
      docs: { summary: 'Tavily extract: the text of each page, and why a page has none', body: extractSchema },
    }),
  ],
};
