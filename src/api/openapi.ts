/** The OpenAPI 3.1 document, assembled from the same schemas the validator compiles. */
import {
  errorBodySchema,
  rerankRequestSchema,
  rerankResponseSchema,
  searchResultSchema,
  webSearchRequestSchema,
  webSearchResponseSchema,
  type RerankLimits,
} from './schemas.js';

/** OpenAPI components are referenced by JSON pointer, not by $id. */
function asComponent(schema: object): object {
  const { $id: _id, ...rest } = schema as { $id?: string };
  return JSON.parse(JSON.stringify(rest).replaceAll('"$ref":"SearchResult"', '"$ref":"#/components/schemas/SearchResult"'));
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
});

const commonErrors = {
  '400': errorResponse('Invalid request; fix it, do not retry unchanged.'),
  '401': errorResponse('Missing or invalid credentials.'),
  '403': errorResponse('Access denied.'),
  '413': errorResponse('Request body too large.'),
  '415': errorResponse('Content-Type is not application/json.'),
  '429': errorResponse('Rate limit or daily allowance exceeded.'),
  '500': errorResponse('Server error.'),
  '502': errorResponse('Upstream provider failure.'),
  '503': errorResponse('No usable provider.'),
  '504': errorResponse('Upstream timeout.'),
};

export function openApiDocument(limits: RerankLimits) {
  const jsonBody = (ref: string) => ({
    required: true,
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
  });
  const ok = (ref: string, description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'searchgate',
      version: '1.0.0',
      description: 'LangSearch-compatible web search and semantic rerank gateway.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    paths: {
      '/v1/web-search': {
        post: {
          operationId: 'webSearch',
          summary: 'Web search with snippets or full page text',
          requestBody: jsonBody('WebSearchRequest'),
          responses: { '200': ok('WebSearchResponse', 'Results in ranked order; possibly none.'), ...commonErrors },
        },
      },
      '/v1/rerank': {
        post: {
          operationId: 'rerank',
          summary: 'Score documents for semantic relevance to a query',
          requestBody: jsonBody('RerankRequest'),
          responses: { '200': ok('RerankResponse', 'Documents best first with scores in [0, 1].'), ...commonErrors },
        },
      },
    },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
      schemas: {
        WebSearchRequest: asComponent(webSearchRequestSchema),
        WebSearchResponse: asComponent(webSearchResponseSchema),
        SearchResult: asComponent(searchResultSchema),
        RerankRequest: asComponent(rerankRequestSchema(limits)),
        RerankResponse: asComponent(rerankResponseSchema),
        ErrorBody: asComponent(errorBodySchema),
      },
    },
  };
}
