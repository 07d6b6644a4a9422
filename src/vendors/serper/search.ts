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
import { googleLanguage } from '../google/search.js';

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

const PRESETS: Record<string, string> = { oneDay: 'qdr:d', oneWeek: 'qdr:w', oneMonth: 'qdr:m', oneYear: 'qdr:y' };

/** Google's custom range takes US-style dates: cdr:1,cd_min:1/5/2024,cd_max:1/31/2024. */
function serperTbs(freshness: Freshness): string | undefined {
  if (freshness.kind === 'preset') return PRESETS[freshness.preset];
  if (freshness.kind !== 'dates') return undefined;
  const us = (day: string) => {
    const [year, month, date] = day.split('-').map(Number);
    return `${month}/${date}/${year}`;
  };
  return `cdr:1,cd_min:${us(freshness.startDay)},cd_max:${us(freshness.endDay)}`;
}

/** Serper answers a used-up balance with 400 "Not enough credits", which no retry can fix. */
function classifySerper(status: number, raw: string) {
  return (status === 400 || status === 402 || status === 403) && /not enough credits|credits? (?:exhausted|used up)/i.test(raw)
    ? ('quota' as const)
    : undefined;
}

export function createSerperSearch(name: string, options: SerperOptions): SearchProvider {
  const serper = vendorClient(name, options, { auth: (apiKey) => ({ 'x-api-key': apiKey }), classify: classifySerper });
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
      const reply = await serper('/search', {
        body: {
          q: withSiteOperators(call.query, call.includeDomains, call.excludeDomains),
          num: call.count,
          // 1-based; with a constant num, page N holds results (N-1)·num+1 … N·num.
          page: call.page + 1,
          ...(options.country ? { gl: options.country.toLowerCase() } : {}),
          ...(hl ? { hl } : {}),
          ...(tbs ? { tbs } : {}),
        },
        signal: call.signal,
      });
      return readSerperReply(name, reply, call.nowMs);
    },
  };
}

function readSerperReply(name: string, reply: Record<string, unknown>, nowMs: number): SearchPage {
  // A search that matched nothing still echoes its searchParameters; anything else without organic is not a reply.
  if (reply.organic === undefined) {
    if (reply.searchParameters && typeof reply.searchParameters === 'object') return { results: [] };
    throw new UpstreamError(name, 'garbage', 'reply has neither organic results nor searchParameters');
  }
  return { results: readResults(name, reply.organic, 'organic', (item) => toResult(item, nowMs)) };
}

function toResult(item: Record<string, unknown>, nowMs: number): ProviderSearchResult | null {
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
      maxPageSize: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      language: { type: 'string', minLength: 2 },
      country: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    },
  }),
  search: createSerperSearch,
};
