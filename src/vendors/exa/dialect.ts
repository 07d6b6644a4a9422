/**
 * Exa's API as searchgate serves it to Exa's clients (../shared/spec/dialects.md §5.2, §7.5):
 * POST /exa/search (web search) and POST /exa/contents (page content). A client is pointed here by
 * its base URL alone: exa-py `Exa(api_key=KEY, base_url=BASE + "/exa")`, exa-js
 * `new Exa(KEY, BASE + "/exa")`, litellm `search(search_provider="exa_ai", api_base=BASE + "/exa")`.
 * The key is the x-api-key header, else a Bearer key.
 *
 * Search: numResults 1..100 (more than 50 is served as 50: fewer results than asked, which Exa
 * allows), domain filters, published-date bounds (the UTC days they fall on), includeText and
 * excludeText as case-insensitive filters on each result's title, snippet and text, and contents
 * (under `contents` or, the older shape, at the top level): `text` is searchgate's plain page text
 * capped at maxCharacters (default 10,000, the SDKs' DEFAULT_MAX_CHARACTERS), `highlights` one passage
 * (the snippet), `summary` searchgate's extractive summary (leading sentences, not generated).
 * Contents: each URL's text, and one status per URL: success, or an error tagged as Exa tags them
 * (CRAWL_NOT_FOUND with the page's status, CRAWL_TIMEOUT when the budget ran out, SOURCE_NOT_AVAILABLE
 * for an address the fetcher refuses, else CRAWL_UNKNOWN_ERROR), with the status Exa pairs with the
 * tag where the page gave none.
 *
 * Honest defaults (R6): `id` is the URL, `title` "" when unknown, `publishedDate` null when unknown,
 * `author` null; no `score`, `highlightScores`, `costDollars` or `resolvedSearchType`.
 *
 * Accepted and ignored: type, category, userLocation, moderation, startCrawlDate, endCrawlDate,
 * livecrawl, maxAgeHours, subpages, subpageTarget, extras, context, additionalQueries, systemPrompt,
 * outputSchema, flags, filterEmptyResults, text.includeHtmlTags and text.verbosity; livecrawlTimeout
 * on search (on contents it bounds the wait).
 *
 * Errors are `{"requestId": log_id, "error": M, "tag": T}`, with Exa's statuses: 401 for a key, 402
 * for a spent allowance (Exa's credits), 429 for a rate limit.
 *
 * Sources: Exa's API reference (search, get-contents, error-codes, the contents statuses changelog),
 * exa-py 2.28.0 and exa-js 2.23.0, as cited in wire.ts.
 */
import { badRequest, type ErrorKind } from '../../api/errors.js';
import { parseFreshness, type Freshness } from '../../api/freshness.js';
import { MAX_COUNT } from '../../api/schemas.js';
import { webSearchRequest, type WebSearchRequest } from '../../api/validate.js';
import { tabledFailure, type ErrorRow } from '../../dialects/error-table.js';
import { ignoredParameters, readBody, type ParameterSchema } from '../../dialects/params.js';
import { dateRange, mergeDomains, snippetOf, titleOf } from '../../dialects/search.js';
import { contentRoute, searchRoute, type Dialect, type DialectFailure, type ErrorReply, type Served } from '../../dialects/types.js';
import type { ContentOutcome, ContentRequest } from '../../gateway/content.js';
import type { GatewayResult, SearchOutcome } from '../../gateway/search.js';
import { leadingSentences } from '../../gateway/text.js';
import {
  crawlError,
  EXA_DEFAULT_MAX_CHARACTERS,
  EXA_DEFAULT_NUM_RESULTS,
  EXA_ERROR_TAGS,
  EXA_KEY_HEADER,
  EXA_MAX_NUM_RESULTS,
  EXA_PAYMENT_REQUIRED_STATUS,
  type ExaContentOption,
  type ExaContentsOptions,
  type ExaContentsRequest,
  type ExaContentsResponse,
  type ExaErrorBody,
  type ExaResult,
  type ExaSearchRequest,
  type ExaSearchResponse,
  type ExaTextOption,
} from './wire.js';

/** Most URLs one contents request takes: the content operation's limit. */
const MAX_CONTENT_URLS = 20;
/** Length of a summary made from page text: as web search's own summaries (src/gateway/search.ts). */
const SUMMARY_CODE_POINTS = 1000;


const OPTION = { type: ['boolean', 'object'] as Array<'boolean' | 'object'> };
const contentsProperties = {
  text: {
    ...OPTION,
    properties: { maxCharacters: { type: 'integer', minimum: 1 } },
    description: `Page text, plain, capped at maxCharacters code points (default ${EXA_DEFAULT_MAX_CHARACTERS})`,
  },
  highlights: { ...OPTION, description: 'One passage per result: its snippet' },
  summary: { ...OPTION, description: "searchgate's extractive summary (leading sentences; not generated)" },
};

const searchSchema: ParameterSchema = {
  type: 'object',
  required: ['query'],
  properties: {
    query: { type: 'string', pattern: '\\S', description: 'The search query' },
    numResults: {
      type: 'integer',
      minimum: 1,
      maximum: EXA_MAX_NUM_RESULTS,
      description: `Results wanted (default ${EXA_DEFAULT_NUM_RESULTS}); more than ${MAX_COUNT} is served as ${MAX_COUNT}`,
    },
    includeDomains: { type: 'array', items: { type: 'string' }, description: 'Only results from these domains (and their subdomains)' },
    excludeDomains: { type: 'array', items: { type: 'string' }, description: 'No results from these domains' },
    startPublishedDate: { type: 'string', description: 'Published on or after the UTC day of this ISO 8601 date or date-time' },
    endPublishedDate: { type: 'string', description: 'Published on or before the UTC day of this ISO 8601 date or date-time' },
    includeText: { type: 'array', items: { type: 'string' }, description: "Only results whose title, snippet or text contains each of these (case-insensitive)" },
    excludeText: { type: 'array', items: { type: 'string' }, description: 'No results whose title, snippet or text contains any of these (case-insensitive)' },
    contents: { type: 'object', properties: { ...contentsProperties, ...ignoredParameters('livecrawl', 'livecrawlTimeout', 'maxAgeHours', 'subpages', 'subpageTarget', 'extras', 'context') } },
    ...contentsProperties,
    ...ignoredParameters(
      'type',
      'category',
      'userLocation',
      'moderation',
      'startCrawlDate',
      'endCrawlDate',
      'livecrawl',
      'livecrawlTimeout',
      'maxAgeHours',
      'subpages',
      'subpageTarget',
      'extras',
      'context',
      'additionalQueries',
      'systemPrompt',
      'outputSchema',
      'flags',
    ),
  },
};

const URL_LIST = { type: ['array', 'string'] as Array<'array' | 'string'>, items: { type: 'string' as const }, minItems: 1, maxItems: MAX_CONTENT_URLS };

const contentsSchema: ParameterSchema = {
  type: 'object',
  properties: {
    urls: { ...URL_LIST, description: `The pages, 1..${MAX_CONTENT_URLS}` },
    ids: { ...URL_LIST, description: 'The older name of urls' },
    ...contentsProperties,
    livecrawlTimeout: { type: 'integer', minimum: 1, description: 'Milliseconds to wait for the pages, at most content.timeBudgetMs' },
    ...ignoredParameters('livecrawl', 'maxAgeHours', 'filterEmptyResults', 'subpages', 'subpageTarget', 'extras', 'context'),
  },
};

/** What a client asked to see of each page. */
interface Wanted {
  text: boolean;
  highlights: boolean;
  summary: boolean;
}

interface SearchEcho extends Wanted {
  includeText: string[];
  excludeText: string[];
}

const asked = (option: ExaContentOption | undefined) => option !== undefined && option !== false;
const maxCharactersOf = (text: ExaTextOption | undefined) => (typeof text === 'object' ? text.maxCharacters : undefined) ?? EXA_DEFAULT_MAX_CHARACTERS;

type ExaErrorRow = ErrorRow & { tag: string };

/** Exa's statuses, sentences and tags; every failure has a tag. */
const EXA_ERRORS: Record<ErrorKind, ExaErrorRow> = {
  missing_key: { canonical: 'Missing API key', tag: EXA_ERROR_TAGS.invalidApiKey },
  invalid_key: { canonical: 'Invalid API key', tag: EXA_ERROR_TAGS.invalidApiKey },
  disabled_account: { tag: EXA_ERROR_TAGS.accessDenied },
  invalid_request: { tag: EXA_ERROR_TAGS.invalidRequestBody },
  too_large: { tag: EXA_ERROR_TAGS.invalidRequestBody },
  unsupported_media_type: { tag: EXA_ERROR_TAGS.invalidRequestBody },
  not_found: { tag: EXA_ERROR_TAGS.notFound },
  method_not_allowed: { tag: EXA_ERROR_TAGS.methodNotAllowed },
  not_implemented: { tag: EXA_ERROR_TAGS.methodNotAllowed },
  rate_limited: { tag: EXA_ERROR_TAGS.rateLimitExceeded },
  allowance_exhausted: { status: EXA_PAYMENT_REQUIRED_STATUS, tag: EXA_ERROR_TAGS.noMoreCredits },
  upstream_failure: { tag: EXA_ERROR_TAGS.upstreamError },
  upstream_unavailable: { tag: EXA_ERROR_TAGS.upstreamError },
  upstream_timeout: { tag: EXA_ERROR_TAGS.upstreamTimeout },
  internal: { tag: EXA_ERROR_TAGS.internalError },
};

function renderExaError(failure: DialectFailure): ErrorReply {
  const { row, status, message, reason } = tabledFailure(EXA_ERRORS, failure);
  const body: ExaErrorBody = { requestId: failure.logId, error: message, tag: row.tag };
  return { status, body, reason };
}

/** Whether a result passes includeText and excludeText, matched case-insensitively in its title, snippet and text. */
function passesTextFilters(result: GatewayResult, { includeText, excludeText }: SearchEcho): boolean {
  if (includeText.length === 0 && excludeText.length === 0) return true;
  const haystack = [result.name, result.snippet, result.text].filter(Boolean).join('\n').toLowerCase();
  return includeText.every((phrase) => haystack.includes(phrase.toLowerCase())) && !excludeText.some((phrase) => haystack.includes(phrase.toLowerCase()));
}

/** A result's fields beyond its address, as the client asked for them: each passage made only when asked. */
function contentFields(wanted: Wanted, text: string | undefined, highlight: () => string, summary: () => string | undefined): Partial<ExaResult> {
  const fields: Partial<ExaResult> = {};
  if (wanted.text && text !== undefined) fields.text = text;
  if (wanted.highlights) {
    const passage = highlight();
    fields.highlights = passage ? [passage] : [];
  }
  if (wanted.summary) {
    const extract = summary();
    if (extract) fields.summary = extract;
  }
  return fields;
}

function renderSearch({ echo, outcome, logId }: Served<WebSearchRequest, SearchOutcome, SearchEcho>): ExaSearchResponse {
  return {
    requestId: logId,
    results: outcome.results
      .filter((result) => passesTextFilters(result, echo))
      .map((result) => ({
        id: result.url,
        url: result.url,
        title: titleOf(result),
        publishedDate: result.datePublished ?? null,
        author: null,
        ...contentFields(echo, result.text, () => snippetOf(result), () => result.summary),
      })),
  };
}

function renderContents({ echo, outcome, logId }: Served<ContentRequest, ContentOutcome, Wanted>): ExaContentsResponse {
  const response: ExaContentsResponse = { requestId: logId, results: [], statuses: [] };
  for (const page of outcome.pages) {
    if ('failure' in page) {
      response.statuses.push({ id: page.url, status: 'error', error: crawlError(page) });
      continue;
    }
    const { text, title, datePublished } = page.page;
    response.statuses.push({ id: page.url, status: 'success' });
    response.results.push({
      id: page.url,
      url: page.url,
      title: title ?? '',
      publishedDate: datePublished ?? null,
      author: null,
      ...contentFields(
        echo,
        text,
        // A page has no snippet: the highlight is what search gives a result without one.
        () => snippetOf({ name: '', url: page.url, displayUrl: page.url, text }),
        () => leadingSentences(text, SUMMARY_CODE_POINTS),
      ),
    });
  }
  return response;
}

type SearchBody = ExaSearchRequest & ExaContentsOptions;

/** The published-date bounds as the UTC days they fall on (R9); no limit without either. */
function publishedWithin({ startPublishedDate: start, endPublishedDate: end }: SearchBody, nowMs: number): Freshness {
  if (start === undefined && end === undefined) return parseFreshness('noLimit');
  return dateRange(start, end, nowMs, { parameter: start !== undefined ? 'startPublishedDate' : 'endPublishedDate', location: 'body' });
}

export const exaDialect: Dialect = {
  name: 'exa',
  prefixes: ['/exa'],
  keys: [{ in: 'header', name: EXA_KEY_HEADER }, { in: 'bearer' }],
  keyHint: `send the ${EXA_KEY_HEADER} header`,
  renderError: renderExaError,
  routes: [
    searchRoute<SearchEcho>({
      operation: 'search',
      methods: ['POST'],
      path: '/exa/search',
      read(input, tools) {
        const body = readBody<SearchBody>(searchSchema, input.body);
        // The older shape puts text, highlights and summary at the top level; `contents` wins.
        const contents: ExaContentsOptions = { text: body.text, highlights: body.highlights, summary: body.summary, ...body.contents };
        const wanted: Wanted = { text: asked(contents.text), highlights: asked(contents.highlights), summary: asked(contents.summary) };
        const request = webSearchRequest({
          query: body.query,
          count: Math.min(body.numResults ?? EXA_DEFAULT_NUM_RESULTS, MAX_COUNT),
          freshness: publishedWithin(body, tools.now()),
          includeDomains: mergeDomains(body.includeDomains),
          excludeDomains: mergeDomains(body.excludeDomains),
          text: wanted.text ? { maxCharacters: maxCharactersOf(contents.text) } : null,
          summary: wanted.summary,
        });
        return { request, echo: { ...wanted, includeText: body.includeText ?? [], excludeText: body.excludeText ?? [] } };
      },
      render: renderSearch,
      docs: { summary: 'Exa search: ranked results, with page text, a highlight or a summary on request', body: searchSchema },
    }),
    contentRoute<Wanted>({
      operation: 'content',
      methods: ['POST'],
      path: '/exa/contents',
      read(input, tools) {
        const body = readBody<Omit<ExaContentsRequest, 'urls' | 'ids'> & { urls?: string | string[]; ids?: string | string[] }>(contentsSchema, input.body);
        const urls = body.urls ?? body.ids;
        if (urls === undefined) throw badRequest('urls is required', { parameter: 'urls', location: 'body', problem: 'missing' });
        // exa-py asks for text when it is given none of the three; so does searchgate, for every client.
        const none = body.text === undefined && body.highlights === undefined && body.summary === undefined;
        const wanted: Wanted = { text: none || asked(body.text), highlights: asked(body.highlights), summary: asked(body.summary) };
        return {
          request: {
            urls: typeof urls === 'string' ? [urls] : urls,
            maxCharacters: maxCharactersOf(body.text),
            timeBudgetMs: body.livecrawlTimeout === undefined ? null : Math.min(body.livecrawlTimeout, tools.settings.contentTimeBudgetMs),
          },
          echo: wanted,
        };
      },
      render: renderContents,
      docs: { summary: 'Exa contents: the text of each page, and a status per URL saying why a page has none', body: contentsSchema },
    }),
  ],
};
