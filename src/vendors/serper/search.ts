/**
 * serper: Google results through Serper (serper.dev).
 * POST {baseUrl}/search with the key in X-API-KEY and a JSON body {q, num, page, gl, hl, tbs}; the
 * organic results are the reply's `organic` array. Serper passes Google's own operators through, so
 * domain filters are site: operators and dates are Google's `tbs` values.
 */
import type { Freshness } from '../../api/freshness.js';
import { shownDateToIsoUtc } from '../../util/dates.js';
import { UpstreamError } from '../../providers/errors.js';
import { plainText, providerOptionsSchema, readResults, searchCapabilities, vendorClient, withSiteOperators } from '../../providers/shared.js';
import type { ProviderSearchResult, ProviderType, SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';
import type { Unchecked } from '../../providers/types.js';
import { googleLanguage } from '../google/search.js';
import {
  SERPER_DEFAULT_NUM,
  SERPER_KEY_HEADER,
  SERPER_MAX_NUM,
  SERPER_SEARCH_PATH,
  SERPER_TBS_PRESETS,
  serperDateRange,
  type SerperOrganicResult,
  type SerperReply,
  type SerperSearchParameters,
} from './wire.js';

export interface SerperOptions {
  /** Default https://google.serper.dev. */
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /**
   * Results per call (num). Google serves pages of 10, and a page of 10 costs one credit; Serper
   * accepts up to 100 in one call.
   */
  maxPageSize: number;
  /** hl when the request names no language, as a BCP 47 tag. */
  language?: string;
  /** gl: the country whose Google is searched, a 2-letter code; Serper's default is us. */
  country?: string;
}

function serperTbs(freshness: Freshness): string | undefined {
  if (freshness.kind === 'preset') return SERPER_TBS_PRESETS[freshness.preset];
  if (freshness.kind === 'dates') return serperDateRange(freshness.startDay, freshness.endDay);
  return undefined;
}

/** Serper answers a used-up balance with 400 "Not enough credits", which no retry can fix. */
function classifySerper(status: number, raw: string) {
  return (status === 400 || status === 402 || status === 403) && /not enough credits|credits? (?:exhausted|used up)/i.test(raw)
    ? ('quota' as const)
    : undefined;
}

export function createSerperSearch(name: string, options: SerperOptions): SearchProvider {
  const serper = vendorClient(name, options, { auth: (apiKey) => ({ [SERPER_KEY_HEADER]: apiKey }), classify: classifySerper });
  return {
    name,
    capabilities: searchCapabilities({
      maxPageSize: options.maxPageSize,
      pagination: true,
      freshness: 'all',
      includeDomains: true,
      excludeDomains: true,
    }),
    async search(call: SearchCall): Promise<SearchPage> {
      const hl = googleLanguage(call.language ?? options.language)?.hl.toLowerCase();
      const tbs = serperTbs(call.freshness);
      const body: SerperSearchParameters = {
        q: withSiteOperators(call.query, call.includeDomains, call.excludeDomains),
        num: call.count,
        page: call.page + 1,
        ...(options.country ? { gl: options.country.toLowerCase() } : {}),
        ...(hl ? { hl } : {}),
        ...(tbs ? { tbs } : {}),
      };
      const reply = await serper(SERPER_SEARCH_PATH, { body, signal: call.signal });
      return readSerperReply(name, reply, call.nowMs);
    },
  };
}

function readSerperReply(name: string, reply: SerperReply, nowMs: number): SearchPage {
  // A search that matched nothing still echoes its searchParameters; anything else without organic is not a reply.
  if (reply.organic === undefined) {
    if (reply.searchParameters && typeof reply.searchParameters === 'object') return { results: [] };
    throw new UpstreamError(name, 'garbage', 'reply has neither organic results nor searchParameters');
  }
  return { results: readResults(name, reply.organic, 'organic', (item) => toResult(item, nowMs)) };
}

function toResult(item: Unchecked<SerperOrganicResult>, nowMs: number): ProviderSearchResult | null {
  if (typeof item.link !== 'string') return null;
  return {
    url: item.link,
    title: plainText(item.title),
    snippet: plainText(item.snippet),
    // Serper copies Google's date as shown: "Jan 5, 2024", or an age such as "3 days ago".
    datePublished: shownDateToIsoUtc(item.date, nowMs),
  };
}

export const serperProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('serper', {
    defaultBaseUrl: 'https://google.serper.dev',
    apiKey: 'required',
    properties: {
      maxPageSize: { type: 'integer', minimum: 1, maximum: SERPER_MAX_NUM, default: SERPER_DEFAULT_NUM },
      language: { type: 'string', minLength: 2 },
      country: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    },
  }),
  search: createSerperSearch,
};
