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
import { UpstreamError } from '../errors.js';
import { callJson } from '../http.js';
import { bearer, endpoint, expectArray, objectsOf, optionalString, secretsOf } from '../shared.js';
import { createJinaContent, jinaClassify, jinaEnvelopeFailure, jinaError, readerHeaders } from '../content/jina.js';
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

export const jinaOptionsSchema = {
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

const RELATIVE_DATE = /^(\d+)\s+(minute|hour|day|week|month|year)s?\s+ago$/i;
const UNIT_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000, month: 2_592_000_000, year: 31_536_000_000 };

/** Google's SERP dates are absolute ("Oct 17, 2025") or relative ("3 days ago"); relative ones are read on the gateway's clock. */
function serpDate(value: unknown, nowMs: number): string | null {
  const text = optionalString(value);
  const relative = text ? RELATIVE_DATE.exec(text.trim()) : null;
  if (!relative) return text;
  return new Date(nowMs - Number(relative[1]) * UNIT_MS[relative[2]!.toLowerCase()]!).toISOString();
}

export function createJinaSearch(name: string, options: JinaOptions): SearchProvider {
  const secrets = secretsOf(options);
  return {
    name,
    capabilities: {
      maxPageSize: MAX_PAGE_SIZE,
      pagination: true,
      freshness: 'none',
      includeDomains: true,
      excludeDomains: true,
      text: true,
      language: true,
    },
    async search(call: SearchCall): Promise<SearchPage> {
      const language = call.language ?? options.language;
      const query = [call.query, ...call.excludeDomains.map((domain) => `-site:${domain}`)].join(' ');
      let reply: unknown;
      try {
        reply = await callJson({
          provider: name,
          url: endpoint(options.searchBaseUrl, '/'),
          headers: {
            ...bearer(options.apiKey),
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
          timeoutMs: options.timeoutMs,
          signal: call.signal,
          secrets,
          classify: jinaClassify,
        });
      } catch (error) {
        // The search host answers a query without hits with 422 "No search results available".
        if (error instanceof UpstreamError && error.status === 422 && /no search results/i.test(error.message)) return { results: [] };
        throw error;
      }
      const envelope = reply as Record<string, unknown> | null;
      const failure = jinaEnvelopeFailure(envelope);
      if (failure) throw jinaError(name, failure, secrets);
      const items = objectsOf(expectArray(name, envelope?.data, 'data'));
      const results: ProviderSearchResult[] = [];
      for (const item of items) {
        const resultUrl = optionalString(item.url);
        if (!resultUrl) continue;
        results.push({
          url: resultUrl,
          title: optionalString(item.title),
          snippet: optionalString(item.description),
          text: call.text ? optionalString(item.text) ?? optionalString(item.content) : null,
          datePublished: optionalString(item.publishedTime) ?? serpDate(item.date, call.nowMs),
        });
      }
      return { results };
    },
  };
}

export const jinaProviderType: ProviderType = {
  optionsSchema: jinaOptionsSchema,
  search: createJinaSearch,
  content: createJinaContent,
  rerank: createJinaRerank,
};
