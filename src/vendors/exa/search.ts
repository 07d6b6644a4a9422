/**
 * exa: Exa's web search, POST {baseUrl}/search with the key in the x-api-key header.
 *
 * Native: count up to numResults' cap (100 on standard plans; no offset, so one call per request),
 * published-date windows (startPublishedDate/endPublishedDate, ISO 8601), domain filters and page
 * text. Snippets are Exa highlights (query-relevant excerpts, included in the search price since the
 * March 2026 pricing), not summaries, which cost an LLM call per result. Exa has no language
 * parameter (userLocation is a country), so the gateway leaves language to the query.
 * Docs: https://exa.ai/docs/reference/search, exa-labs/openapi-spec exa-openapi-spec.yaml,
 * exa-labs/exa-js src/index.ts.
 */
import { exaClient, type ExaOptions } from './client.js';
import type { ExaContentsOptions, ExaResult, ExaSearchRequest } from './wire.js';
import { freshnessInstants, optionalString, readResults, searchCapabilities } from '../../providers/shared.js';
import type { ProviderSearchResult, SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';

function searchBody(call: SearchCall, options: ExaOptions): ExaSearchRequest {
  const window = freshnessInstants(call.freshness, call.nowMs);
  const contents: ExaContentsOptions = call.text
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

/** One result of the reply, read field by field: an upstream's reply is checked, not trusted to match ExaResult. */
function toResult(item: { [Field in keyof ExaResult]?: unknown }): ProviderSearchResult | null {
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
