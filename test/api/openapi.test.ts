import test from 'ava';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createAjv } from '../../src/api/validate.js';
import { startGateway } from '../helpers/gateway.js';

test('GET /v1/openapi.json serves a valid OpenAPI 3.1 document, version 1.0.0', async (t) => {
  const gateway = await startGateway({ rerank: { maxDocuments: 321 } });
  t.teardown(() => gateway.close());
  const response = await fetch(`${gateway.url}/v1/openapi.json`);
  t.is(response.status, 200);
  const document = (await response.json()) as any;
  t.is(document.openapi, '3.1.0');
  t.is(document.info.version, '1.0.0');
  const validator = new Validator();
  const result = await validator.validate(document);
  t.true(result.valid, JSON.stringify(result.errors));
  t.true(['/v1/rerank', '/v1/web-search'].every((path) => path in document.paths));
  t.is(document.components.securitySchemes.bearerAuth.scheme, 'bearer');
  // The dialect routes are in it too, each with its vendor's key locations.
  t.deepEqual(Object.keys(document.paths['/cohere/v2/rerank']), ['post']);
  t.deepEqual(document.paths['/cohere/v2/rerank'].post.security, [{ bearerAuth: [] }]);
  t.is(document.paths['/v2/rerank'].post.requestBody.content['application/json'].schema.$ref, '#/components/schemas/RerankRequest');
  // The configured rerank limit shows in the published schema.
  t.is(document.components.schemas.RerankRequest.properties.documents.maxItems, 321);
});

test('the published request schemas accept and reject what the validator does', async (t) => {
  const gateway = await startGateway({});
  t.teardown(() => gateway.close());
  const document = (await (await fetch(`${gateway.url}/v1/openapi.json`)).json()) as any;
  const ajv = createAjv();
  const validate = ajv.compile(document.components.schemas.WebSearchRequest);
  t.true(validate({ query: 'q', count: 50, freshness: '2024-02-29', contents: { text: { max_characters: 10 } } }));
  t.false(validate({ query: 'q', count: 51 }));
  t.false(validate({ query: '' }));
  t.false(validate({ query: 'q', freshness: '2023-02-29' }));
  t.false(validate({ query: 'q', includeDomains: [' '] }));
  t.false(validate({ query: 'q', contents: { text: { max_characters: 0 } } }));
});
