/**
 * tavily: Tavily Search, POST {baseUrl}/search with `Authorization: Bearer tvly-…`.
 *
 * Native: up to 20 results per call (max_results; no offset, so one call per request), freshness
 * presets (time_range) and date ranges (start_date/end_date, YYYY-MM-DD), domain filters and page
 * text (include_raw_content), as markdown too. Tavily dates results only for the news topic (published_date).
 * Tavily documents no language parameter, so the gateway leaves language to the query.
 * Docs: https://docs.tavily.com/documentation/api-reference/endpoint/search,
 * https://help.tavily.com/articles/3347142954-best-practices (date filters), tavily-ai/tavily-js
 * src/search.ts and src/types.ts, tavily-ai/tavily-python tavily/tavily.py.
 */
import { markdownRawContent, rawContentFormat, tavilyClient, type TavilyOptions } from './client.js';
import { TAVILY_MAX_RESULTS, type TavilySearchRequest, type TavilySearchResult } from './wire.js';
import { PRESET_PERIODS, readResults, searchCapabilities, stringFields } from '../../providers/shared.js';
import type { SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';

function searchBody(call: SearchCall, options: TavilyOptions): TavilySearchRequest {
  const freshness = call.freshness;
  return {
    query: call.query,
    max_results: Math.min(call.count, TAVILY_MAX_RESULTS),
    search_depth: options.searchDepth,
    topic: options.topic,
    include_answer: false,
    // A request for markdown asks Tavily for it whatever the configured format: no Extract call per page then.
    include_raw_content: call.text ? rawContentFormat(options, call.text.format === 'markdown') : false,
    ...(freshness.kind === 'preset' ? { time_range: PRESET_PERIODS[freshness.preset] } : {}),
    ...(freshness.kind === 'dates' ? { start_date: freshness.startDay, end_date: freshness.endDay } : {}),
    ...(call.includeDomains.length ? { include_domains: call.includeDomains } : {}),
    ...(call.excludeDomains.length ? { exclude_domains: call.excludeDomains } : {}),
    ...(options.country && options.topic === 'general' ? { country: options.country } : {}),
  };
}

const toResult = stringFields({
  title: 'title',
  snippet: 'content',
  text: 'raw_content',
  datePublished: 'published_date',
} satisfies Record<string, keyof TavilySearchResult>);

export function createTavilySearch(name: string, options: TavilyOptions): SearchProvider {
  const tavily = tavilyClient(name, options);
  return {
    name,
    capabilities: searchCapabilities({ maxPageSize: TAVILY_MAX_RESULTS, freshness: 'all', includeDomains: true, excludeDomains: true, text: true }),
    async search(call: SearchCall): Promise<SearchPage> {
      const reply = await tavily('/search', { body: searchBody(call, options), signal: call.signal });
      const results = readResults(name, reply.results, 'results', toResult);
      if (call.text?.format === 'markdown') {
        for (const result of results) if (result.text) Object.assign(result, markdownRawContent(result.text, options));
      }
      return { results };
    },
  };
}
