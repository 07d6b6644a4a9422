/**
 * google: Google's Programmable Search Engine through the Custom Search JSON API.
 * GET {baseUrl}/customsearch/v1?key=…&cx=…&q=… (developers.google.com/custom-search/v1/reference/rest/v1/cse/list).
 *
 * Google has closed this API to new customers: "The Custom Search JSON API is closed to new
 * customers", and "Existing Custom Search JSON API customers have until January 1, 2027 to transition
 * to an alternative solution" (developers.google.com/custom-search/v1/overview). It serves operators
 * who already have a key and an engine (cx) until then.
 *
 * The key travels as the `key` query parameter, as the API documents; it is passed as a secret so
 * that it is cut out of every error message.
 */
import type { Freshness } from '../../api/freshness.js';
import { shownDateToIsoUtc, toIsoUtc } from '../../util/dates.js';
import type { Unchecked } from '../../providers/types.js';
import { UpstreamError } from '../../providers/errors.js';
import type { Classify } from '../../providers/http.js';
import {
  isTraditionalChinese,
  languageSubtags,
  objectsOf,
  optionalString,
  plainText,
  providerOptionsSchema,
  readResults,
  searchCapabilities,
  vendorClient,
  withSiteOperators,
} from '../../providers/shared.js';
import type { ProviderSearchResult, ProviderType, SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';
import {
  GOOGLE_DATE_RESTRICT_PRESETS,
  GOOGLE_LANGUAGE_CODES,
  GOOGLE_LR_LANGUAGES,
  GOOGLE_LR_PREFIX,
  GOOGLE_MAX_NUM,
  GOOGLE_MAX_RESULTS,
  GOOGLE_PUBLISHED_METATAG,
  GOOGLE_SEARCH_PATH,
  googleDateRangeSort,
  type GoogleErrorBody,
  type GoogleReply,
  type GoogleResult,
  type GoogleSearchParameters,
} from './wire.js';

export interface GoogleOptions {
  /** Default https://www.googleapis.com. */
  baseUrl: string;
  /** A Google Cloud API key with the Custom Search API enabled. */
  apiKey: string;
  /** The Programmable Search Engine ID (cx) to search with. */
  cx: string;
  timeoutMs: number;
  /** Language (lr and hl) when the request names none, as a BCP 47 tag. */
  language?: string;
  /** gl: the end user's country, a 2-letter code that boosts results from there. */
  country?: string;
  /** SafeSearch: active or off (Google's default). */
  safe?: 'active' | 'off';
}

/**
 * Presets are dateRestrict; a range is the "restrict to range" form of sort (sort=date:r:YYYYMMDD:YYYYMMDD)
 * on the date Google estimates for every page from its URL, title and byline
 * (developers.google.com/custom-search/docs/structured_search).
 */
function dateParameters(freshness: Freshness): Pick<GoogleSearchParameters, 'dateRestrict' | 'sort'> {
  if (freshness.kind === 'preset') return { dateRestrict: GOOGLE_DATE_RESTRICT_PRESETS[freshness.preset] };
  if (freshness.kind === 'dates') return { sort: googleDateRangeSort(freshness.startDay, freshness.endDay) };
  return {};
}

/**
 * Google's language codes for a BCP 47 tag: `hl` (interface language, also Serper's) and `lr`
 * (lang_xx, which restricts results). Google keeps the old codes for Hebrew (iw) and Norwegian (no),
 * and separates Chinese and Portuguese by region.
 */
export function googleLanguage(tag: string | null | undefined): { hl: string; lr: string | null } | null {
  const subtags = languageSubtags(tag);
  if (!subtags) return null;
  const { language, region } = subtags;
  if (language === 'zh') {
    const hl = isTraditionalChinese(subtags) ? 'zh-TW' : 'zh-CN';
    return { hl, lr: `${GOOGLE_LR_PREFIX}${hl}` };
  }
  if (language === 'pt') return { hl: region === 'BR' ? 'pt-BR' : 'pt-PT', lr: `${GOOGLE_LR_PREFIX}pt` };
  const code = GOOGLE_LANGUAGE_CODES[language] ?? language;
  return { hl: code, lr: GOOGLE_LR_LANGUAGES.has(code) ? `${GOOGLE_LR_PREFIX}${code}` : null };
}

/** Google's error envelope: {error: {code, message, errors: [{reason}], status, details: [{reason}]}}. */
function googleError(body: unknown): { message: string; reasons: string[] } | null {
  const error = (body as { error?: Unchecked<GoogleErrorBody['error']> } | null | undefined)?.error;
  if (!error || typeof error !== 'object') return null;
  const reasons = [error.errors, error.details]
    .flatMap((list) => (Array.isArray(list) ? objectsOf(list) : []))
    .map((entry) => String(entry.reason ?? '').toLowerCase());
  return { message: typeof error.message === 'string' ? error.message : '', reasons };
}

const classifyGoogle: Classify = (status, _raw, body) => {
  const error = googleError(body);
  if (!error) return undefined;
  const has = (...reasons: string[]) => reasons.some((reason) => error.reasons.includes(reason));
  // A wrong key is a 400 INVALID_ARGUMENT for Google, not a 401.
  if (has('api_key_invalid', 'keyinvalid', 'keyexpired') || /API key (not valid|expired)/i.test(error.message)) return 'auth';
  if (status === 429 || has('ratelimitexceeded', 'userratelimitexceeded', 'dailylimitexceeded', 'quotaexceeded', 'rate_limit_exceeded')) {
    // "Quota exceeded for quota metric 'Queries' and limit 'Queries per day'" lasts until midnight
    // Pacific time; the per-minute limits pass within a minute.
    return has('dailylimitexceeded') || /per day|daily/i.test(error.message) ? 'quota' : 'rate_limited';
  }
  return undefined;
};

export function createGoogleSearch(name: string, options: GoogleOptions): SearchProvider {
  // No credentials header: the key is the `key` query parameter (a secret all the same).
  const google = vendorClient(name, options, { classify: classifyGoogle });
  return {
    name,
    capabilities: searchCapabilities({ maxPageSize: GOOGLE_MAX_NUM, pagination: true, freshness: 'all', includeDomains: true, excludeDomains: true }),
    async search(call: SearchCall): Promise<SearchPage> {
      const start = call.offset + 1;
      // Kept within start + num ≤ 100, as the discovery document words the limit.
      const num = Math.min(call.count, GOOGLE_MAX_NUM, GOOGLE_MAX_RESULTS - start);
      if (num < 1) return { results: [], hasMore: false };
      // siteSearch takes one site; several filters become site: operators in the query.
      const single = call.includeDomains.length + call.excludeDomains.length === 1;
      const language = googleLanguage(call.language ?? options.language);
      const query: GoogleSearchParameters = {
        key: options.apiKey,
        cx: options.cx,
        q: single ? call.query : withSiteOperators(call.query, call.includeDomains, call.excludeDomains),
        num,
        start,
        ...dateParameters(call.freshness),
        siteSearch: single ? (call.includeDomains[0] ?? call.excludeDomains[0]) : undefined,
        siteSearchFilter: single ? (call.includeDomains.length ? 'i' : 'e') : undefined,
        lr: language?.lr ?? undefined,
        hl: language?.hl,
        gl: options.country?.toLowerCase(),
        safe: options.safe,
      };
      return readGoogleReply(name, await google(GOOGLE_SEARCH_PATH, { query, signal: call.signal }), call.nowMs);
    },
  };
}

function readGoogleReply(name: string, reply: GoogleReply, nowMs: number): SearchPage {
  const queries = reply.queries as { nextPage?: unknown } | undefined;
  const information = reply.searchInformation as { totalResults?: unknown } | undefined;
  // `items` is absent, not empty, when nothing matched: only a reply that is not a search is garbage.
  const isSearchReply = (queries && typeof queries === 'object') || (information && typeof information === 'object');
  if (reply.items === undefined && !isSearchReply) throw new UpstreamError(name, 'garbage', 'reply has neither items nor search metadata');
  const results = reply.items === undefined ? [] : readResults(name, reply.items, 'items', (item) => toResult(item, nowMs));
  const total = Number(information?.totalResults);
  return {
    results,
    hasMore: Array.isArray(queries?.nextPage) && queries.nextPage.length > 0,
    totalEstimatedMatches: Number.isFinite(total) ? total : null,
  };
}

function toResult(item: Unchecked<GoogleResult>, nowMs: number): ProviderSearchResult | null {
  if (typeof item.link !== 'string') return null;
  const { date, snippet } = splitDatedSnippet(plainText(item.snippet), nowMs);
  return { url: item.link, title: plainText(item.title), snippet, datePublished: metatagDate(item.pagemap) ?? date };
}

const DATE_METATAGS = [GOOGLE_PUBLISHED_METATAG, 'og:article:published_time', 'datepublished', 'publishdate', 'pubdate', 'date', 'dc.date'];

/** The publication date a page declares in its meta tags, which Google returns in pagemap.metatags. */
function metatagDate(pagemap: unknown): string | null {
  const metatags = (pagemap as { metatags?: unknown } | null)?.metatags;
  for (const tags of Array.isArray(metatags) ? objectsOf(metatags) : []) {
    for (const key of DATE_METATAGS) {
      const value = optionalString(tags[key]);
      if (value && toIsoUtc(value)) return value;
    }
  }
  return null;
}

/** "Jan 5, 2024", "5 Jan 2024", "3 days ago": the forms of the date Google puts before a snippet. */
const SNIPPET_DATE = /^(?:[A-Za-z]{3,9}\.? \d{1,2}, \d{4}|\d{1,2} [A-Za-z]{3,9}\.? \d{4}|(?:an?|\d+) [a-z]+ ago)$/i;

/** Google starts many snippets with the page's date or age: "Jan 5, 2024 ... text", "3 days ago ... text". */
function splitDatedSnippet(snippet: string | null, nowMs: number): { date: string | null; snippet: string | null } {
  const match = snippet ? /^(.{3,24}?)\s*(?:\.\.\.|…)\s*(.*)$/.exec(snippet) : null;
  const date = match && SNIPPET_DATE.test(match[1]!) ? shownDateToIsoUtc(match[1], nowMs) : null;
  return date ? { date, snippet: match![2] || null } : { date: null, snippet };
}

export const googleProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('google', {
    defaultBaseUrl: 'https://www.googleapis.com',
    apiKey: 'required',
    required: ['cx'],
    properties: {
      cx: { type: 'string', minLength: 1 },
      language: { type: 'string', minLength: 2 },
      country: { type: 'string', pattern: '^[A-Za-z]{2}$' },
      safe: { enum: ['active', 'off'] },
    },
  }),
  search: createGoogleSearch,
};
