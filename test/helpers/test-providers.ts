/**
 * Provider types that exist only in the tests, to drive the gateway's machinery (pagination,
 * content fill) over real HTTP before the real adapters that need it land. They use the same
 * shared HTTP client as production providers.
 */
import { callJson } from '../../src/providers/http.js';
import type { ProviderType } from '../../src/vendors/registry.js';
import type { SearchCapabilities } from '../../src/providers/types.js';

/** A paged JSON search API: GET {baseUrl}/search?q=&offset=&limit= → {items: [{url, title, snippet, date?}]}. */
export const pagedSearchType: ProviderType = {
  optionsSchema: {
    type: 'object',
    required: ['baseUrl', 'maxPageSize'],
    properties: { type: {}, baseUrl: { type: 'string' }, maxPageSize: { type: 'integer' }, text: { type: 'boolean', default: false } },
  },
  search: (name: string, options: { baseUrl: string; maxPageSize: number; text: boolean }) => ({
    name,
    capabilities: {
      maxPageSize: options.maxPageSize,
      pagination: true,
      freshness: 'none',
      includeDomains: false,
      excludeDomains: false,
      text: options.text,
    } satisfies SearchCapabilities,
    async search(call) {
      const url = `${options.baseUrl}/search?q=${encodeURIComponent(call.query)}&offset=${call.offset}&limit=${call.count}`;
      const body = (await callJson({ provider: name, url, timeoutMs: 2000, signal: call.signal })) as {
        items: Array<{ url: string; title: string; snippet: string; date?: string }>;
      };
      return { results: body.items.map((item) => ({ url: item.url, title: item.title, snippet: item.snippet, datePublished: item.date ?? null })) };
    },
  }),
};

/** A page-text API: GET {baseUrl}/text?url= → {text} or 404. */
export const pageTextType: ProviderType = {
  optionsSchema: { type: 'object', required: ['baseUrl'], properties: { type: {}, baseUrl: { type: 'string' } } },
  content: (name: string, options: { baseUrl: string }) => ({
    name,
    async fetchContent(url, { signal }) {
      const body = (await callJson({ provider: name, url: `${options.baseUrl}/text?url=${encodeURIComponent(url)}`, timeoutMs: 5000, signal })) as {
        text: string;
      };
      return { text: body.text };
    },
  }),
};
