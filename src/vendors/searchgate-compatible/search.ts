/**
 * searchgate-compatible: any upstream that speaks this same contract — LangSearch, another
 * searchgate, a Bing-shaped proxy. POST {baseUrl}/v1/web-search with a Bearer key; the reply is the
 * `data.webPages.value` envelope.
 */
import { bearer, optionalNumber, readResults, searchCapabilities, stringFields, vendorClient, type EnvelopeFailure } from '../../providers/shared.js';
import type { SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';

export interface SearchgateCompatibleOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  /** Largest count the upstream accepts (LangSearch: 10 in older docs, 50 now). */
  maxPageSize: number;
  /** Set false for an upstream known to ignore freshness or domain filters: the gateway then filters itself. */
  nativeFilters: boolean;
  /** Model id sent upstream for rerank; default: the id the client asked for. */
  rerankModel?: string;
  maxDocuments: number;
}

export const searchgateCompatibleOptionsSchema = {
  type: 'object',
  required: ['baseUrl'],
  additionalProperties: false,
  properties: {
    type: { const: 'searchgate-compatible' },
    baseUrl: { type: 'string', pattern: '^https?://' },
    apiKey: { type: 'string' },
    timeoutMs: { type: 'integer', minimum: 1, default: 10_000 },
    maxPageSize: { type: 'integer', minimum: 1, maximum: 50, default: 50 },
    nativeFilters: { type: 'boolean', default: true },
    rerankModel: { type: 'string', minLength: 1 },
    maxDocuments: { type: 'integer', minimum: 1, default: 1000 },
  },
} as const;

/**
 * LangSearch-style replies can carry an error in the envelope with HTTP 200 (`code` other than 200);
 * that must not be read as "no results".
 */
export function searchgateEnvelopeFailure(envelope: Record<string, unknown>): EnvelopeFailure | null {
  const code = typeof envelope.code === 'string' ? Number(envelope.code) : envelope.code;
  if (typeof code !== 'number' || code === 200 || code === 0) return null;
  return { code, detail: String(envelope.msg ?? envelope.message ?? '') };
}

export function createSearchgateCompatibleSearch(name: string, options: SearchgateCompatibleOptions): SearchProvider {
  const upstream = vendorClient(name, options, { auth: bearer, envelope: searchgateEnvelopeFailure });
  return {
    name,
    capabilities: searchCapabilities({
      maxPageSize: options.maxPageSize,
      text: true,
      ...(options.nativeFilters ? { freshness: 'all', includeDomains: true, excludeDomains: true } : {}),
    }),
    async search(call: SearchCall): Promise<SearchPage> {
      const reply = await upstream('/v1/web-search', {
        body: {
          query: call.query,
          count: call.count,
          freshness: call.freshness.raw,
          ...(call.includeDomains.length ? { includeDomains: call.includeDomains } : {}),
          ...(call.excludeDomains.length ? { excludeDomains: call.excludeDomains } : {}),
          ...(call.text ? { contents: { text: { max_characters: call.text.maxCharacters } } } : {}),
          ...(call.summary ? { summary: true } : {}),
        },
        signal: call.signal,
      });
      const webPages = (reply.data as { webPages?: { value?: unknown; totalEstimatedMatches?: unknown; someResultsRemoved?: unknown } } | undefined)?.webPages;
      return {
        results: readResults(name, webPages?.value, 'data.webPages.value', toResult),
        totalEstimatedMatches: optionalNumber(webPages?.totalEstimatedMatches),
        someResultsRemoved: webPages?.someResultsRemoved === true,
      };
    },
  };
}

const toResult = stringFields({
  title: 'name',
  snippet: 'snippet',
  text: 'text',
  summary: 'summary',
  datePublished: 'datePublished',
  dateLastCrawled: 'dateLastCrawled',
});
