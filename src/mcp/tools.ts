/**
 * The MCP tools' definitions: what a model reads to decide when to call them. Input schemas are the
 * API's own request schemas (src/api/schemas.ts) with model-facing wording added, so the tools accept
 * exactly what the HTTP API accepts, validated by the same validator with the same defaults.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { rerankRequestSchema, rerankResponseSchema, searchResultSchema, webSearchRequestSchema, type RerankLimits } from '../api/schemas.js';

/**
 * A schema as strict clients accept it: without what is ours alone (schema ids, our custom `format`,
 * `deprecated`), and with every array-valued `type` (which ajv takes but some validators refuse)
 * written as `anyOf` one type each. In an input schema, `null` alternatives are dropped: a tool's
 * caller leaves an argument out instead.
 */
function forClients(schema: unknown, { input = false }: { input?: boolean } = {}): Record<string, unknown> {
  if (Array.isArray(schema)) return schema.map((item) => forClients(item, { input })) as unknown as Record<string, unknown>;
  if (!schema || typeof schema !== 'object') return schema as Record<string, unknown>;
  const cleaned = Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => key !== '$id' && key !== 'deprecated' && !(key === 'format' && value === 'freshness'))
      .map(([key, value]) => [key, key === 'properties' ? mapValues(value, (property) => forClients(property, { input })) : forClients(value, { input })]),
  );
  const { type } = cleaned;
  if (!Array.isArray(type)) return cleaned;
  const types = (type as string[]).filter((name) => !(input && name === 'null'));
  if (types.length === 1) return { ...cleaned, type: types[0] };
  const { type: _type, ...rest } = cleaned;
  const shared = pick(rest, GENERIC_KEYWORDS);
  return { ...shared, anyOf: types.map((name) => ({ type: name, ...pick(rest, TYPE_KEYWORDS[name] ?? []) })) };
}

/** Keywords that concern the value whatever its type, kept beside anyOf. */
const GENERIC_KEYWORDS = ['description', 'default', 'title', 'examples'];
/** Keywords that concern one type, moved into that type's alternative. */
const TYPE_KEYWORDS: Record<string, string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'minItems', 'maxItems', 'uniqueItems'],
  object: ['properties', 'required', 'additionalProperties'],
};

const pick = (object: Record<string, unknown>, keys: readonly string[]) =>
  Object.fromEntries(Object.entries(object).filter(([key]) => keys.includes(key)));
const mapValues = (object: unknown, map: (value: unknown) => unknown) =>
  Object.fromEntries(Object.entries(object as Record<string, unknown>).map(([key, value]) => [key, map(value)]));

function withProperties(schema: { properties: object }, names: readonly string[]): Record<string, unknown> {
  return { ...schema, properties: pick(schema.properties as Record<string, unknown>, names) };
}

function describeProperties(schema: Record<string, unknown>, descriptions: Record<string, string>): Record<string, unknown> {
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  return {
    ...schema,
    properties: Object.fromEntries(
      Object.entries(properties).map(([name, property]) => [name, descriptions[name] ? { ...property, description: descriptions[name] } : property]),
    ),
  };
}

export const WEB_SEARCH = 'web_search';
export const RERANK = 'rerank';

export function toolDefinitions(limits: RerankLimits): Tool[] {
  return [
    {
      name: WEB_SEARCH,
      title: 'Web search',
      description: [
        'Search the web and get ranked results, each with a title, URL, publication date when known, and a snippet;',
        'or, with contents.text, the main text of each page. Use it for current facts, documentation, news and anything',
        'you should cite with a source URL. Write a specific query; narrow by date with freshness and by site with',
        'includeDomains or excludeDomains. Each call counts against the API key\'s daily allowance, so prefer one',
        'well-aimed search over many broad ones.',
      ].join(' '),
      inputSchema: describeProperties(forClients(webSearchRequestSchema, { input: true }), {
        query: 'What to search for, in natural language or keywords. Required, not blank.',
        count: 'How many results to return, 1 to 50 (default 10).',
        freshness:
          'Only results published in this period: oneDay, oneWeek, oneMonth, oneYear, noLimit (default), a UTC day YYYY-MM-DD, or an inclusive range YYYY-MM-DD..YYYY-MM-DD.',
        includeDomains: 'Only return results from these sites, e.g. ["docs.python.org"]; subdomains match too.',
        excludeDomains: 'Never return results from these sites; subdomains match too.',
        contents:
          'Set {"text": true} to get each page\'s main text instead of a snippet (slower), or {"text": {"max_characters": N}} to cap it at N characters per result (default 5000).',
        language: 'Preferred result language as a BCP 47 tag such as en or de, where the search source supports it.',
        summary: 'Legacy: also return a longer summary of each page.',
      }) as Tool['inputSchema'],
      outputSchema: forClients({
        type: 'object',
        required: ['query', 'results'],
        properties: {
          query: { type: 'string' },
          results: { type: 'array', items: searchResultSchema },
          totalEstimatedMatches: { type: ['integer', 'null'] },
          someResultsRemoved: { type: ['boolean', 'null'] },
        },
      }) as Tool['outputSchema'],
      annotations: { title: 'Web search', readOnlyHint: true, openWorldHint: true },
    },
    {
      name: RERANK,
      title: 'Rerank documents',
      description: [
        'Score candidate texts by how relevant each is to a query (a calibrated score from 0 to 1; higher is more',
        'relevant) and return them best first. Use it to pick the passages that answer a question out of many',
        '(search results, document chunks, notes) before reading or quoting them, or to drop the irrelevant ones:',
        'a score below about 0.1 rarely answers the query. Each call counts against the API key\'s daily allowance.',
      ].join(' '),
      // Cohere's compatibility fields (rank_fields, the truncation knobs) would only distract a model.
      inputSchema: describeProperties(forClients(withProperties(rerankRequestSchema(limits), ['model', 'query', 'documents', 'top_n', 'return_documents']), { input: true }), {
        query: 'The question or need the documents are scored against.',
        documents: `The candidate texts, as strings (or objects with a "text" field); 1 to ${limits.maxDocuments}.`,
        top_n: 'Return only the N most relevant documents (default: all).',
        return_documents: 'Also return each document\'s text with its score (default false: only index and score).',
        model: 'A reranker model id configured on this gateway; leave it out for the default.',
      }) as Tool['inputSchema'],
      outputSchema: forClients({
        type: 'object',
        required: ['model', 'results'],
        properties: { model: rerankResponseSchema.properties.model, results: rerankResponseSchema.properties.results },
      }) as Tool['outputSchema'],
      annotations: { title: 'Rerank documents', readOnlyHint: true, openWorldHint: false },
    },
  ];
}
