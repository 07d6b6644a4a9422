/**
 * local: searchgate's own index of pages it has crawled or been given (src/local). Filters,
 * freshness and paging all run inside the index query, and text mode returns the stored main text.
 */
import { freshnessWindow } from '../../api/freshness.js';
import { DEFAULT_INDEX_DIRECTORY, sharedIndex } from '../../local/shared.js';
import { searchCapabilities } from '../shared.js';
import type { SearchCall, SearchPage, SearchProvider } from '../types.js';

export interface LocalOptions {
  directory: string;
  /** When a content provider fetches a page for another upstream, also add it to the index. */
  addFetchedPages: boolean;
  fetchTimeoutMs: number;
  maxPageBytes: number;
  /** Let the fetcher reach private, loopback and link-local addresses (tests, intranets). */
  allowPrivateNetworks: boolean;
}

export const localOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { const: 'local' },
    directory: { type: 'string', minLength: 1, default: DEFAULT_INDEX_DIRECTORY },
    addFetchedPages: { type: 'boolean', default: false },
    fetchTimeoutMs: { type: 'integer', minimum: 1, default: 8000 },
    maxPageBytes: { type: 'integer', minimum: 1024, default: 10_485_760 },
    allowPrivateNetworks: { type: 'boolean', default: false },
  },
} as const;

export function createLocalSearch(name: string, options: LocalOptions): SearchProvider {
  return {
    name,
    capabilities: searchCapabilities({ maxPageSize: 50, pagination: true, freshness: 'all', includeDomains: true, excludeDomains: true, text: true }),
    async search(call: SearchCall): Promise<SearchPage> {
      const index = await sharedIndex(options.directory);
      const { hits, total } = await index.search({
        query: call.query,
        limit: call.count,
        offset: call.offset,
        includeDomains: call.includeDomains,
        excludeDomains: call.excludeDomains,
        window: freshnessWindow(call.freshness, call.nowMs),
      });
      return {
        results: hits.map(({ page, snippet }) => ({
          url: page.url,
          title: page.title,
          snippet,
          text: call.text ? page.text : null,
          datePublished: page.datePublished,
          dateLastCrawled: page.fetchedAt,
        })),
        totalEstimatedMatches: total,
      };
    },
  };
}
