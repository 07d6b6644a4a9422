/**
 * marginalia: Marginalia Search, an independent index of the small, old and non-commercial web,
 * through its current API: GET {baseUrl}/search?query=…&count=&page= with the key in the API-Key
 * header (about.marginalia-search.com/article/api; api-service ApiV2.java in
 * MarginaliaSearch/MarginaliaSearch). The reply is {license, query, results: [{url, title,
 * description, quality, format…}]}, under CC-BY-NC-SA 4.0 unless the key's terms say otherwise.
 *
 * The legacy API (api.marginalia.nu/{key}/search/{query}) put the key in the URL path; this one
 * keeps it in a header, and it is kept out of errors all the same.
 */
import type { UpstreamFailureKind } from '../../providers/errors.js';
import { languageSubtags, optionalNumber, providerOptionsSchema, readResults, searchCapabilities, stringFields, vendorClient } from '../../providers/shared.js';
import type { ProviderType, SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';

export interface MarginaliaOptions {
  /** Default https://api2.marginalia-search.com; a self-hosted api-service answers the same under {host}/api/v2. */
  baseUrl: string;
  /** Default public: the shared key, free and often rate-limited; a key of your own has its own limits. */
  apiKey: string;
  timeoutMs: number;
  /**
   * lang sent on every call (ISO 639-1). Marginalia's own default is en, the one language its index
   * is built for (languages-default.xml), so a request's language is not passed on: asking for
   * another would match nothing or fail. Set it for an instance indexing other languages.
   */
  language?: string;
  /** dc: most results from one domain, 1 to 100; Marginalia's default is 2. */
  resultsPerDomain?: number;
  /** A custom filter defined for your key (the public key cannot have any). */
  filter?: string;
  /** nsfw: 0 no filter, 1 reduce extreme results (Marginalia's default). */
  nsfw?: 0 | 1;
}

const SHARED_KEY = 'public';
/** count is 1-100 (API docs; ApiSearchOperator caps results at 100). */
const MAX_COUNT = 100;
/** QueryFactory drops a query of 12 or more terms ("Your search query is too long") and finds nothing. */
const MAX_QUERY_TERMS = 11;

/**
 * Domain filters as Marginalia's own query terms (its search help: "site:example.com keyword").
 * One included site only: a second site: term replaces the first, and parentheses make advisory
 * terms, not an OR, so several included sites are left to the gateway's re-check, which always runs.
 * Excluded sites as -site: terms: every document is indexed with site:<host> and site:<domain>
 * keywords (MetaTagsBuilder.addUrl), and a minus makes a term an exclusion. Terms that would push the
 * query past Marginalia's length limit are left to the gateway too.
 */
function withSiteTerms(query: string, includeDomains: readonly string[], excludeDomains: readonly string[]): string {
  const terms = [...(includeDomains.length === 1 ? [`site:${includeDomains[0]}`] : []), ...excludeDomains.map((domain) => `-site:${domain}`)];
  const room = MAX_QUERY_TERMS - query.trim().split(/\s+/).length;
  return [query, ...terms.slice(0, Math.max(0, room))].join(' ');
}

/**
 * ApiV2.search answers 429 both for the per-minute limit ("QPM Limit Exceeded") and for a used-up
 * daily allowance ("Daily Limit Exceeded", API-Event-Type: OverLimitBlock) or a billing cap the
 * client set; only the first passes within minutes.
 */
function classifyMarginalia(status: number, raw: string): UpstreamFailureKind | undefined {
  if (status === 429 && /daily limit|billable/i.test(raw)) return 'quota';
  return undefined;
}

export function createMarginaliaSearch(name: string, options: MarginaliaOptions): SearchProvider {
  // The shared key is published in Marginalia's docs; hiding it would only garble messages that say "public".
  const secrets = options.apiKey && options.apiKey !== SHARED_KEY ? [options.apiKey] : [];
  const marginalia = vendorClient(name, options, { auth: (apiKey) => ({ 'api-key': apiKey }), classify: classifyMarginalia, secrets });
  return {
    name,
    // No freshness: results carry no date, and the year>NNNN query term filters on a guessed year only.
    // No language: see the language option.
    capabilities: searchCapabilities({ maxPageSize: MAX_COUNT, pagination: true, includeDomains: true, excludeDomains: true }),
    async search(call: SearchCall): Promise<SearchPage> {
      const query = {
        query: withSiteTerms(call.query, call.includeDomains, call.excludeDomains),
        count: Math.min(call.count, MAX_COUNT),
        // 1-indexed (API docs: "Select results page").
        page: call.page + 1,
        lang: languageSubtags(options.language)?.language,
        dc: options.resultsPerDomain,
        filter: options.filter,
        nsfw: options.nsfw,
      };
      return readMarginaliaReply(name, await marginalia('/search', { query, signal: call.signal }));
    },
  };
}

function readMarginaliaReply(name: string, reply: Record<string, unknown>): SearchPage {
  const results = readResults(name, reply.results, 'results', toResult);
  // Newer replies say which page this is of how many; without them a short page marks the end.
  const page = optionalNumber(reply.page);
  const pages = optionalNumber(reply.pages);
  return page !== null && pages !== null ? { results, hasMore: page < pages } : { results };
}

const toResult = stringFields({ title: 'title', snippet: 'description' });

const marginaliaOptionsSchema = providerOptionsSchema('marginalia', {
  defaultBaseUrl: 'https://api2.marginalia-search.com',
  apiKey: 'optional',
  properties: {
    apiKey: { type: 'string', minLength: 1, default: SHARED_KEY },
    language: { type: 'string', minLength: 2 },
    resultsPerDomain: { type: 'integer', minimum: 1, maximum: 100 },
    filter: { type: 'string', minLength: 1 },
    nsfw: { type: 'integer', enum: [0, 1] },
  },
});

export const marginaliaProviderType: ProviderType = {
  optionsSchema: marginaliaOptionsSchema,
  search: createMarginaliaSearch,
};
