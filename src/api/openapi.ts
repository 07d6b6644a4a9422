/**
 * The OpenAPI 3.1 document, assembled from the same schemas the validators compile: /v1's from
 * src/api/schemas.ts, and each vendor dialect's from the JSON Schemas its routes validate with.
 */
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

/** What the document says of a vendor dialect: plain data, so that the API layer needs no dialect code. */
export interface DialectDocs {
  name: string;
  /** Where the dialect's clients put the key, in the order tried. */
  keys: ReadonlyArray<{ in: 'bearer' } | { in: 'header'; name: string } | { in: 'query'; name: string } | { in: 'body'; field: string } | { in: 'path'; param: string }>;
  routes: ReadonlyArray<{
    methods: readonly string[];
    path: string;
    summary: string;
    /** Query parameters (GET) as one object schema. */
    parameters?: object;
    /** The JSON body (POST) schema. */
    body?: object;
    response?: object;
  }>;
}

export function openApiDocument(limits: RerankLimits, dialects: readonly DialectDocs[] = []) {
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
      ...dialectPaths(dialects),
    },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' }, ...dialectSecuritySchemes(dialects) },
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

/** The security scheme a key location is, where OpenAPI can say it (a body field or a path segment it cannot). */
function securitySchemeOf(location: DialectDocs['keys'][number]): [string, object] | null {
  switch (location.in) {
    case 'bearer':
      return ['bearerAuth', { type: 'http', scheme: 'bearer' }];
    case 'header':
      return [`header:${location.name}`, { type: 'apiKey', in: 'header', name: location.name }];
    case 'query':
      return [`query:${location.name}`, { type: 'apiKey', in: 'query', name: location.name }];
    default:
      return null;
  }
}

const schemeName = (id: string) => id.replace(/[^A-Za-z0-9._-]/g, '_');

function dialectSecuritySchemes(dialects: readonly DialectDocs[]): Record<string, object> {
  const schemes: Record<string, object> = {};
  for (const dialect of dialects) {
    for (const location of dialect.keys) {
      const scheme = securitySchemeOf(location);
      if (scheme && scheme[0] !== 'bearerAuth') schemes[schemeName(scheme[0])] = scheme[1];
    }
  }
  return schemes;
}

/**
 * One path item per dialect route: its methods, its request (query parameters or JSON body, from the
 * schema it validates with), its security (any one of the dialect's key locations) and its answers.
 * Errors are in the vendor's shape (README "Use searchgate from the client you already have").
 */
function dialectPaths(dialects: readonly DialectDocs[]): Record<string, object> {
  const paths: Record<string, Record<string, object>> = {};
  for (const dialect of dialects) {
    const security = dialect.keys.flatMap((location) => {
      const scheme = securitySchemeOf(location);
      return scheme ? [{ [schemeName(scheme[0])]: [] }] : [];
    });
    const bodyKey = dialect.keys.find((location): location is { in: 'body'; field: string } => location.in === 'body');
    for (const route of dialect.routes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      const pathParameters = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name]) => ({
        name,
        in: 'path',
        required: true,
        description: dialect.keys.some((location) => location.in === 'path' && location.param === name) ? 'The API key, for clients that cannot send headers.' : undefined,
        schema: { type: 'string' },
      }));
      const item = (paths[path] ??= {});
      for (const method of route.methods) {
        item[method.toLowerCase()] = {
          operationId: `${dialect.name}_${method.toLowerCase()}_${path.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '')}`,
          tags: [dialect.name],
          summary: route.summary,
          ...(bodyKey ? { description: `The key may also come as the body field \`${bodyKey.field}\`.` } : {}),
          security,
          parameters: [...pathParameters, ...(method === 'GET' ? queryParameters(route.parameters) : [])],
          ...(method === 'POST' && (route.body ?? route.parameters)
            ? { requestBody: { required: false, content: { 'application/json': { schema: asComponent(route.body ?? route.parameters!) } } } }
            : {}),
          responses: {
            '200': { description: `The ${dialect.name} answer.`, content: { 'application/json': { schema: route.response ? asComponent(route.response) : { type: 'object' } } } },
            default: { description: `An error in ${dialect.name}'s own shape.`, content: { 'application/json': { schema: { type: 'object' } } } },
          },
        };
      }
    }
  }
  return paths;
}

function queryParameters(schema: object | undefined): object[] {
  if (!schema) return [];
  const { properties = {}, required = [] } = schema as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.includes(name),
    ...((property as { description?: string }).description ? { description: (property as { description: string }).description } : {}),
    schema: asComponent(property),
  }));
}
