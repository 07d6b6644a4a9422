/**
 * brave: the Brave Search API's web search, over Brave's own index.
 * GET {baseUrl}/res/v1/web/search with the key in X-Subscription-Token; the reply's `web.results`
 * are the organic results (api-dashboard.search.brave.com/api-reference/web/search/get; the wire
 * format is in wire.ts).
 */
import type { Freshness } from '../../api/freshness.js';
import type { Unchecked } from '../../providers/types.js';
import { shownDateToIsoUtc } from '../../util/dates.js';
import type { Classify } from '../../providers/http.js';
import {
  expectObject,
  isTraditionalChinese,
  languageSubtags,
  optionalString,
  plainText,
  PRESET_PERIODS,
  providerOptionsSchema,
  readResults,
  searchCapabilities,
  vendorClient,
} from '../../providers/shared.js';
import type { ProviderSearchResult, ProviderType, SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';
import {
  BRAVE_FRESHNESS,
  BRAVE_KEY_HEADER,
  BRAVE_LAST_PAGE,
  BRAVE_MAX_COUNT,
  BRAVE_SEARCH_LANGUAGES,
  BRAVE_WEB_SEARCH_PATH,
  braveDateRange,
  braveErrorCode,
  discardSiteRule,
  type BraveWebResult,
  type BraveWebSearchParameters,
  type BraveWebSearchResponse,
} from './wire.js';

export interface BraveOptions {
  /** Default https://api.search.brave.com. */
  baseUrl: string;
  /** The subscription token of a Brave Search API plan. */
  apiKey: string;
  timeoutMs: number;
  /** search_lang when the request names no language, as a BCP 47 tag ("en", "pt-BR", "ja"). */
  language?: string;
  /** Where results come from: a 2-letter country code or ALL; Brave's default is US. */
  country?: string;
  /** off, moderate or strict; Brave's default is moderate. */
  safesearch?: 'off' | 'moderate' | 'strict';
}

/**
 * Every Brave plan has a one-second rate window (X-RateLimit-Policy "1;w=1"); its X-RateLimit-Reset
 * is therefore at most a second away when a RATE_LIMITED reply carries no Retry-After.
 */
const RATE_WINDOW_MS = 1_000;

function braveFreshness(freshness: Freshness): string | undefined {
  if (freshness.kind === 'preset') return BRAVE_FRESHNESS[PRESET_PERIODS[freshness.preset]];
  if (freshness.kind === 'dates') return braveDateRange(freshness.startDay, freshness.endDay);
  return undefined;
}

/**
 * Brave's search_lang codes differ from BCP 47 for Japanese, Chinese scripts and the Portugals; a
 * language Brave has no code for would be a 422, so it is left to Brave's default.
 */
function braveLanguage(tag: string | null | undefined): string | undefined {
  const subtags = languageSubtags(tag);
  if (!subtags) return undefined;
  const { language, region } = subtags;
  const code =
    language === 'ja' ? 'jp'
    : language === 'zh' ? (isTraditionalChinese(subtags) ? 'zh-hant' : 'zh-hans')
    : language === 'pt' ? (region === 'BR' ? 'pt-br' : 'pt-pt')
    : language === 'en' && region === 'GB' ? 'en-gb'
    : language === 'no' || language === 'nn' ? 'nb'
    : language;
  return BRAVE_SEARCH_LANGUAGES.has(code) ? code : undefined;
}

const classifyBrave: Classify = (status, raw, body) => {
  const code = braveErrorCode(body);
  if (code === 'QUOTA_LIMITED') return 'quota'; // 429, the plan's monthly quota is used up
  if (code === 'RATE_LIMITED') return 'rate_limited';
  // SUBSCRIPTION_TOKEN_INVALID comes as 422, SUBSCRIPTION_NOT_FOUND as 404: both are our credentials.
  if (code?.startsWith('SUBSCRIPTION_')) return 'auth';
  if (status === 422 && raw.toLowerCase().includes(BRAVE_KEY_HEADER.toLowerCase())) return 'auth'; // the header is missing
  return undefined;
};

export function createBraveSearch(name: string, options: BraveOptions): SearchProvider {
  const brave = vendorClient(name, options, {
    auth: (apiKey) => ({ [BRAVE_KEY_HEADER]: apiKey }),
    classify: classifyBrave,
    rateLimitWindowMs: RATE_WINDOW_MS,
  });
  return {
    name,
    capabilities: searchCapabilities({ maxPageSize: BRAVE_MAX_COUNT, pagination: true, freshness: 'all', includeDomains: true, excludeDomains: true }),
    async search(call: SearchCall): Promise<SearchPage> {
      if (call.page > BRAVE_LAST_PAGE) return { results: [], hasMore: false };
      const parameters: BraveWebSearchParameters = {
        // Included sites as site: operators joined by OR (Brave documents both, but no parentheses),
        // which it echoes in query.search_operators; excluded ones as an inline Goggle, Brave's
        // documented way to drop a site ("-site:" is not among its documented operators).
        q: withIncludedSites(call.query, call.includeDomains),
        goggles: call.excludeDomains.length ? call.excludeDomains.map(discardSiteRule).join('\n') : undefined,
        count: call.count,
        offset: call.page,
        freshness: braveFreshness(call.freshness),
        search_lang: braveLanguage(call.language ?? options.language),
        country: options.country,
        safesearch: options.safesearch,
        result_filter: 'web',
        text_decorations: false,
      };
      return readBraveReply(name, await brave(BRAVE_WEB_SEARCH_PATH, { query: parameters, signal: call.signal }), call);
    },
  };
}

function withIncludedSites(query: string, includeDomains: readonly string[]): string {
  if (includeDomains.length === 0) return query;
  const sites = includeDomains.map((domain) => `site:${domain}`);
  return `${query} ${sites.length === 1 ? sites[0] : sites.join(' OR ')}`;
}

function readBraveReply(name: string, reply: Unchecked<BraveWebSearchResponse>, call: SearchCall): SearchPage {
  const query = reply.query as Unchecked<BraveWebSearchResponse['query']> | undefined;
  // Brave leaves out the `web` section when nothing matched; a search reply without it is an empty page.
  if (reply.web === undefined && reply.type === 'search' && query && typeof query === 'object') return { results: [], hasMore: false };
  const web = expectObject(name, reply.web, 'web section');
  const results = readResults(name, web.results, 'web.results', (item) => toResult(item, call.nowMs));
  const more = query?.more_results_available;
  return { results, ...(typeof more === 'boolean' ? { hasMore: more && call.page < BRAVE_LAST_PAGE } : {}) };
}

function toResult(item: Unchecked<BraveWebResult>, nowMs: number): ProviderSearchResult | null {
  if (typeof item.url !== 'string') return null;
  return {
    url: item.url,
    title: plainText(item.title),
    snippet: plainText(item.description),
    datePublished: optionalString(item.page_age) ?? shownDateToIsoUtc(item.age, nowMs),
  };
}

export const braveProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('brave', {
    defaultBaseUrl: 'https://api.search.brave.com',
    apiKey: 'required',
    properties: {
      language: { type: 'string', minLength: 2 },
      country: { type: 'string', pattern: '^([A-Za-z]{2}|ALL)$' },
      safesearch: { enum: ['off', 'moderate', 'strict'] },
    },
  }),
  search: createBraveSearch,
};
