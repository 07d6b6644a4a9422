/**
 * JSON Schemas (draft 2020-12, the dialect of OpenAPI 3.1) for every body the API reads or writes.
 * They are the single source for request validation (src/api/validate.ts), for the OpenAPI document
 * (src/api/openapi.ts) and for the tests that check our responses.
 */
import { FRESHNESS_PATTERN } from './freshness.js';

export const MAX_COUNT = 50;
export const DEFAULT_COUNT = 10;
export const DEFAULT_MAX_CHARACTERS = 5000;
export const MAX_INT32 = 2147483647;
export const DEFAULT_RERANK_MODEL = 'service-reranker-v1';

const nonBlankString = { type: 'string', pattern: '\\S' } as const;

const domainList = (what: string) => ({
  type: 'array',
  items: { ...nonBlankString, description: 'A domain such as example.com; it also matches its subdomains.' },
  description: `${what} Omitted or empty means no filter.`,
});

export const webSearchRequestSchema = {
  $id: 'WebSearchRequest',
  type: 'object',
  required: ['query'],
  properties: {
    query: { ...nonBlankString, minLength: 1, description: 'The search query. Must not be empty or blank.' },
    count: {
      type: 'integer',
      maximum: MAX_COUNT,
      default: DEFAULT_COUNT,
      description: 'Maximum number of results, 1 to 50. A value below 1 is treated as 1; above 50 is rejected.',
    },
    freshness: {
      type: 'string',
      pattern: FRESHNESS_PATTERN,
      format: 'freshness',
      default: 'noLimit',
      description:
        'noLimit, oneDay, oneWeek, oneMonth, oneYear, a UTC day YYYY-MM-DD, or an inclusive UTC range YYYY-MM-DD..YYYY-MM-DD (start <= end).',
    },
    includeDomains: domainList('Only return results from these domains.'),
    excludeDomains: domainList('Never return results from these domains.'),
    contents: {
      type: 'object',
      properties: {
        text: {
          type: ['boolean', 'object'],
          default: false,
          description: 'true, or an object, returns the full page text instead of a snippet.',
          properties: {
            max_characters: {
              type: 'integer',
              minimum: 1,
              maximum: MAX_INT32,
              default: DEFAULT_MAX_CHARACTERS,
              description: 'Per-result cap on text, in Unicode code points.',
            },
            format: {
              type: 'string',
              enum: ['text', 'markdown'],
              default: 'text',
              description:
                'Extension: "markdown" gives each page\'s main text as markdown (headings, lists, tables, code fences) where the content chain has it: a page the local index stored from HTML, a page fetched and extracted for the request, or one a content provider renders (Firecrawl, Jina Reader, Tavily Extract); a page known only as plain text (ingested as text, a provider without markdown) comes as plain text.',
            },
          },
        },
      },
    },
    language: {
      type: 'string',
      pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$',
      description:
        'Extension: preferred result language as a BCP 47 tag (en, de, pt-BR). Passed to upstreams that filter by language; others ignore it.',
    },
    summary: {
      type: 'boolean',
      default: false,
      deprecated: true,
      description: 'Legacy flag: when true each result also carries a longer `summary` of the page.',
    },
  },
} as const;

export interface RerankLimits {
  maxDocuments: number;
}

/**
 * The rerank body of LangSearch, Cohere v1/v2 and Jina, which all post to a `/v1/rerank`
 * (../shared/spec/dialects.md §4.1). Optional fields accept `null` as "not given": the vendors'
 * clients send it (langchain-cohere's max_tokens_per_doc, JinaRerank's top_n).
 */
export function rerankRequestSchema(limits: RerankLimits) {
  return {
    $id: 'RerankRequest',
    type: 'object',
    required: ['query', 'documents'],
    properties: {
      model: {
        type: ['string', 'null'],
        minLength: 1,
        default: DEFAULT_RERANK_MODEL,
        description:
          'A configured reranker id; service-reranker-v1 is the default alias. Cohere, Jina and Voyage model names (rerank-v3.5, jina-reranker-v2-base-multilingual, rerank-2.5…) are accepted as aliases.',
      },
      query: { ...nonBlankString, description: 'The query to score documents against.' },
      documents: {
        type: 'array',
        minItems: 1,
        maxItems: limits.maxDocuments,
        description:
          'Candidate texts: strings, or objects with a `text` string (Cohere v1, Jina), or objects whose fields `rank_fields` names.',
        items: { type: ['string', 'object'], properties: { text: { type: 'string' } } },
      },
      top_n: {
        type: ['integer', 'null'],
        minimum: 1,
        description: 'How many of the best documents to return; default all. A value above the document count returns all.',
      },
      return_documents: {
        type: ['boolean', 'null'],
        default: false,
        description: 'Whether each result carries its document text.',
      },
      rank_fields: {
        type: ['array', 'null'],
        items: { type: 'string', minLength: 1 },
        description: 'Cohere v1: with object documents, rank on these fields, written one `field: value` line each.',
      },
      max_chunks_per_doc: { type: ['integer', 'null'], minimum: 1, description: 'Accepted for Cohere clients; no effect (long documents are windowed, never cut).' },
      max_tokens_per_doc: { type: ['integer', 'null'], minimum: 1, description: 'Accepted for Cohere clients; no effect (long documents are windowed, never cut).' },
    },
  } as const;
}

const nullableString = { type: ['string', 'null'] } as const;

export const searchResultSchema = {
  $id: 'SearchResult',
  type: 'object',
  required: ['url'],
  properties: {
    id: nullableString,
    name: nullableString,
    url: { type: 'string' },
    displayUrl: { ...nullableString, description: 'The URL with percent-escapes and punycode decoded.' },
    snippet: { ...nullableString, description: 'Snippet mode only.' },
    text: { ...nullableString, description: 'Text mode only; at most max_characters code points.' },
    summary: { ...nullableString, description: 'Only when the legacy summary flag is true.' },
    datePublished: { ...nullableString, description: 'ISO 8601, when known.' },
    dateLastCrawled: { ...nullableString, description: 'ISO 8601, when known.' },
  },
} as const;

export const webSearchResponseSchema = {
  $id: 'WebSearchResponse',
  type: 'object',
  required: ['code', 'data'],
  properties: {
    code: { type: 'integer' },
    log_id: nullableString,
    msg: nullableString,
    data: {
      type: 'object',
      required: ['webPages'],
      properties: {
        _type: { type: 'string' },
        queryContext: { type: 'object', properties: { originalQuery: { type: 'string' } } },
        webPages: {
          type: 'object',
          required: ['value'],
          properties: {
            webSearchUrl: nullableString,
            totalEstimatedMatches: { type: ['integer', 'null'] },
            someResultsRemoved: { type: ['boolean', 'null'] },
            value: { type: 'array', items: { $ref: 'SearchResult' } },
          },
        },
      },
    },
  },
} as const;

export const rerankResponseSchema = {
  $id: 'RerankResponse',
  type: 'object',
  required: ['code', 'model', 'results'],
  properties: {
    code: { type: 'integer' },
    log_id: nullableString,
    msg: nullableString,
    model: { type: 'string', description: 'The reranker that scored: the id asked for, or the configured model a vendor name stands for.' },
    id: { type: 'string', description: 'Cohere clients read it: the log_id.' },
    meta: {
      type: 'object',
      description: 'Cohere-shaped billing: search_units is the allowance units this request was charged.',
      properties: {
        api_version: { type: 'object', properties: { version: { type: 'string' } } },
        billed_units: { type: 'object', properties: { search_units: { type: 'integer', minimum: 0 } } },
      },
    },
    results: {
      type: 'array',
      description: 'Best first; ties keep document order.',
      items: {
        type: 'object',
        required: ['index', 'relevance_score', 'rerankScore'],
        properties: {
          index: { type: 'integer', minimum: 0 },
          relevance_score: { type: 'number', minimum: 0, maximum: 1 },
          rerankScore: { type: 'number', minimum: 0, maximum: 1, description: 'Same value as relevance_score.' },
          document: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
        },
      },
    },
  },
} as const;

export const errorBodySchema = {
  $id: 'ErrorBody',
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: ['string', 'integer'] },
    log_id: nullableString,
    message: nullableString,
    msg: nullableString,
  },
} as const;
