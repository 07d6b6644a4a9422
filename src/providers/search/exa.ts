/**
 * exa: Exa's web search, POST {baseUrl}/search with the key in the x-api-key header. One type
 * serves search and page text (/contents, src/providers/content/exa.ts) from one config block.
 *
 * Native: count up to numResults' cap (100 on standard plans; no offset, so one call per request),
 * published-date windows (startPublishedDate/endPublishedDate, ISO 8601), domain filters and page
 * text. Snippets are Exa highlights (query-relevant excerpts, included in the search price since the
 * March 2026 pricing), not summaries, which cost an LLM call per result. Exa has no language
 * parameter (userLocation is a country), so the gateway leaves language to the query.
 * Docs: https://exa.ai/docs/reference/search, exa-labs/openapi-spec exa-openapi-spec.yaml,
 * exa-labs/exa-js src/index.ts.
 */
import { createExaContent, exaClient } from '../content/exa.js';
import { freshnessInstants, optionalString, providerOptionsSchema, readResults, searchCapabilities } from '../shared.js';
import type { ProviderSearchResult, ProviderType, SearchCall, SearchPage, SearchProvider } from '../types.js';

export interface ExaOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Exa's search type: "auto" (Exa picks), "fast" or "instant" for latency, "neural", or the costlier deep variants. */
  searchType: string;
  /** Most results one call asks for: 100 on standard plans, more on custom plans. */
  maxResults: number;
  /** Restrict to one Exa category ("news", "research paper", "company"…); unset searches the whole web. */
  category?: string;
  /** Two-letter ISO country of the searcher (userLocation), to favour regional results. */
  userLocation?: string;
  /** Length of the highlights Exa returns as each result's snippet; Exa advises not going below about 400. */
  snippetMaxCharacters: number;
  /** Serve `summary: true` from Exa's per-result LLM summary (billed per result, slower) instead of letting the gateway derive one. */
  nativeSummary: boolean;
}

const exaOptionsSchema = providerOptionsSchema('exa', {
  defaultBaseUrl: 'https://api.exa.ai',
  apiKey: 'required',
  properties: {
    searchType: { enum: ['auto', 'fast', 'instant', 'neural', 'deep-lite', 'deep', 'deep-reasoning'], default: 'auto' },
    maxResults: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    category: { type: 'string', minLength: 1 },
    userLocation: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    snippetMaxCharacters: { type: 'integer', minimum: 50, maximum: 10_000, default: 500 },
    nativeSummary: { type: 'boolean', default: false },
  },
});

function searchBody(call: SearchCall, options: ExaOptions): Record<string, unknown> {
  const window = freshnessInstants(call.freshness, call.nowMs);
  const contents: Record<string, unknown> = call.text
    ? { text: { maxCharacters: call.text.maxCharacters } }
    : { highlights: { maxCharacters: options.snippetMaxCharacters } };
  if (call.summary && options.nativeSummary) contents.summary = { query: call.query };
  return {
    query: call.query,
    type: options.searchType,
    numResults: call.count,
    ...(options.category ? { category: options.category } : {}),
    ...(options.userLocation ? { userLocation: options.userLocation.toUpperCase() } : {}),
    ...(call.includeDomains.length ? { includeDomains: call.includeDomains } : {}),
    ...(call.excludeDomains.length ? { excludeDomains: call.excludeDomains } : {}),
    ...(window ? { startPublishedDate: window.start } : {}),
    ...(window?.end ? { endPublishedDate: window.end } : {}),
    contents,
  };
}

function toResult(item: Record<string, unknown>): ProviderSearchResult | null {
  if (typeof item.url !== 'string') return null;
  const highlights = Array.isArray(item.highlights)
    ? item.highlights.filter((text): text is string => typeof text === 'string' && text.trim() !== '')
    : [];
  return {
    url: item.url,
    title: optionalString(item.title),
    snippet: highlights.length ? highlights.join(' … ') : null,
    text: optionalString(item.text),
    summary: optionalString(item.summary),
    datePublished: optionalString(item.publishedDate),
  };
}

export function createExaSearch(name: string, options: ExaOptions): SearchProvider {
  const exa = exaClient(name, options);
  return {
    name,
    capabilities: searchCapabilities({ maxPageSize: options.maxResults, freshness: 'all', includeDomains: true, excludeDomains: true, text: true }),
    async search(call: SearchCall): Promise<SearchPage> {
      const reply = await exa('/search', { body: searchBody(call, options), signal: call.signal });
      return { results: readResults(name, reply.results, 'results', toResult) };
    },
  };
}

export const exaProviderType: ProviderType = {
  optionsSchema: exaOptionsSchema,
  search: createExaSearch,
  content: createExaContent,
};
