/**
 * jina search: POST {searchBaseUrl}/ with JSON {q, num, page, hl, gl} (the SERP-shaped parameters of
 * jina-ai/reader src/api/serp.ts; `page` is 1-based, pages of `num` results, num ≤ 20). Include
 * domains go in X-Site (comma-space separated: reader src/services/serper-search.ts); exclusions
 * as `-site:` operators in q, which the Google SERP behind it understands. Snippet mode asks
 * `X-Respond-With: no-content` (no page fetching: cheaper and faster); text mode lets Jina read
 * every result page and returns its text, its markdown `content` when a request asks for markdown.
 * No date filter exists.
 */
import { shownDateToIsoUtc } from '../../util/dates.js';
import { UpstreamError } from '../../providers/errors.js';
import { optionalString, readResults, searchCapabilities, withSiteOperators } from '../../providers/shared.js';
import { jinaClient, markdownContent, readerFormatFor, readerHeaders, type JinaOptions } from './client.js';
import type { ProviderSearchResult, SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';

/** s.jina.ai validates num to 0…20. */
const MAX_PAGE_SIZE = 20;

/** The Google hl codes that keep a region; every other tag is sent as its language subtag. */
const REGIONAL_HL = new Set(['zh-cn', 'zh-tw', 'pt-br', 'pt-pt']);

function hlOf(tag: string): string {
  const lower = tag.toLowerCase();
  if (REGIONAL_HL.has(lower)) return lower;
  if (lower === 'zh-hant' || lower.startsWith('zh-hant-')) return 'zh-tw';
  if (lower === 'zh-hans' || lower.startsWith('zh-hans-')) return 'zh-cn';
  return lower.split('-')[0]!;
}

export function createJinaSearch(name: string, options: JinaOptions): SearchProvider {
  const jina = jinaClient(name, options, options.searchBaseUrl);
  return {
    name,
    capabilities: searchCapabilities({ maxPageSize: MAX_PAGE_SIZE, pagination: true, includeDomains: true, excludeDomains: true, text: true }),
    async search(call: SearchCall): Promise<SearchPage> {
      const language = call.language ?? options.language;
      const query = withSiteOperators(call.query, [], call.excludeDomains);
      let reply: unknown;
      try {
        // Any JSON value: a reply that is not an envelope object is garbage for having no data array.
        reply = await jina.json('/', {
          headers: {
            // A request for markdown reads Jina's markdown content, whatever format the deployment reads.
            ...(call.text ? readerHeaders({ readerFormat: readerFormatFor(options, call.text.format === 'markdown') }) : { 'x-respond-with': 'no-content' }),
            ...(call.includeDomains.length ? { 'x-site': call.includeDomains.join(', ') } : {}),
          },
          body: {
            q: query,
            num: call.count,
            ...(call.page > 0 ? { page: call.page + 1 } : {}),
            ...(language ? { hl: hlOf(language) } : {}),
            ...(options.country ? { gl: options.country.toLowerCase() } : {}),
          },
          signal: call.signal,
        });
      } catch (error) {
        // The search host answers a query without hits with 422 "No search results available".
        if (error instanceof UpstreamError && error.status === 422 && /no search results/i.test(error.message)) return { results: [] };
        throw error;
      }
      return { results: readResults(name, (reply as Record<string, unknown> | null)?.data, 'data', (item) => toResult(item, call, options)) };
    },
  };
}

function toResult(item: Record<string, unknown>, call: SearchCall, options: JinaOptions): ProviderSearchResult | null {
  const url = optionalString(item.url);
  if (!url) return null;
  const markdown = call.text?.format === 'markdown' ? optionalString(item.content) : null;
  return {
    url,
    title: optionalString(item.title),
    snippet: optionalString(item.description),
    text: call.text ? optionalString(item.text) ?? optionalString(item.content) : null,
    ...(markdown ? markdownContent(markdown, options) : {}),
    // Google's SERP dates as shown: absolute ("Oct 17, 2025") or an age ("3 days ago").
    datePublished: optionalString(item.publishedTime) ?? shownDateToIsoUtc(item.date, call.nowMs),
  };
}
