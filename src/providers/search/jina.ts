/**
 * jina: one Jina AI account serving three operations, each on its own host — web search
 * (s.jina.ai), page content (the Reader, r.jina.ai, in ../content/jina.ts) and rerank
 * (api.jina.ai/v1/rerank, in ../rerank/jina.ts). One config block, one API key, a base URL per host.
 *
 * Search: POST {searchBaseUrl}/ with JSON {q, num, page, hl, gl} (the SERP-shaped parameters of
 * jina-ai/reader src/api/serp.ts; `page` is 1-based, pages of `num` results, num ≤ 20). Include
 * domains go in X-Site (comma-space separated: reader src/services/serper-search.ts); exclusions
 * as `-site:` operators in q, which the Google SERP behind it understands. Snippet mode asks
 * `X-Respond-With: no-content` (no page fetching: cheaper and faster); text mode lets Jina read
 * every result page and returns its text. No date filter exists.
 */
import { shownDateToIsoUtc } from '../../util/dates.js';
import { UpstreamError } from '../errors.js';
import { optionalString, readResults, searchCapabilities, withSiteOperators } from '../shared.js';
import { createJinaContent, jinaClient, readerHeaders } from '../content/jina.js';
import { createJinaRerank } from '../rerank/jina.js';
import { scoreScaleSchema, type ScoreScale } from '../rerank/scores.js';
import type { ProviderSearchResult, ProviderType, SearchCall, SearchPage, SearchProvider } from '../types.js';

export interface JinaOptions {
  apiKey?: string;
  timeoutMs: number;
  /** s.jina.ai, or eu.s.jina.ai to keep processing in the EU. */
  searchBaseUrl: string;
  /** r.jina.ai, or eu.r.jina.ai. */
  readerBaseUrl: string;
  /** api.jina.ai (the rerank path /v1/rerank is appended). */
  rerankBaseUrl: string;
  /** Default result language (BCP 47) when the request names none; sent as hl. */
  language?: string;
  /** Two-letter country the search should appear to come from (gl). */
  country?: string;
  /**
   * What page text is: 'content' (Jina's default: the main content as Markdown; we ask for links
   * reduced to their anchor text and images dropped) or 'text' (document.body.innerText, which
   * keeps navigation and footers).
   */
  readerFormat: 'content' | 'text';
  /** The Jina model every rerank call uses; the gateway's model id is only our local name for it. */
  rerankModel: string;
  /** jina-reranker-v2 answers sigmoid probabilities; 'logit' for a model that answers raw scores. */
  scoreScale: ScoreScale;
  /** Documents per rerank call; larger requests are split by the gateway. */
  maxDocuments: number;
}

const url = { type: 'string', pattern: '^https?://' } as const;

const jinaOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { const: 'jina' },
    // Optional: the Reader answers without a key (at a lower rate); search and rerank need one.
    apiKey: { type: 'string', minLength: 1 },
    timeoutMs: { type: 'integer', minimum: 1, default: 15_000 },
    searchBaseUrl: { ...url, default: 'https://s.jina.ai' },
    readerBaseUrl: { ...url, default: 'https://r.jina.ai' },
    rerankBaseUrl: { ...url, default: 'https://api.jina.ai' },
    language: { type: 'string', minLength: 2 },
    country: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    readerFormat: { enum: ['content', 'text'], default: 'content' },
    rerankModel: { type: 'string', minLength: 1, default: 'jina-reranker-v2-base-multilingual' },
    scoreScale: { ...scoreScaleSchema, default: 'probability' },
    maxDocuments: { type: 'integer', minimum: 1, default: 1000 },
  },
} as const;

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
            ...(call.text ? readerHeaders(options) : { 'x-respond-with': 'no-content' }),
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
      return { results: readResults(name, (reply as Record<string, unknown> | null)?.data, 'data', (item) => toResult(item, call)) };
    },
  };
}

function toResult(item: Record<string, unknown>, call: SearchCall): ProviderSearchResult | null {
  const url = optionalString(item.url);
  if (!url) return null;
  return {
    url,
    title: optionalString(item.title),
    snippet: optionalString(item.description),
    text: call.text ? optionalString(item.text) ?? optionalString(item.content) : null,
    // Google's SERP dates as shown: absolute ("Oct 17, 2025") or an age ("3 days ago").
    datePublished: optionalString(item.publishedTime) ?? shownDateToIsoUtc(item.date, call.nowMs),
  };
}

export const jinaProviderType: ProviderType = {
  optionsSchema: jinaOptionsSchema,
  search: createJinaSearch,
  content: createJinaContent,
  rerank: createJinaRerank,
};
