/**
 * Hostile requests over every route the gateway serves, as fast-check arbitraries, and a raw HTTP
 * client that sends any of them and waits for the answer. The property test
 * (test/server/hostile-requests.test.ts) runs a few hundred with a fixed seed; bench/fuzz.ts and
 * bench/soak.ts send thousands to a gateway in another process and watch its memory.
 *
 * A request aims at a route (each dialect's, read from the dialects themselves, and the gateway's
 * own), mostly with that route's method and a valid key, so that much of the traffic reaches the
 * index and the model; around that: random JSON, strings and document lists up to the body limit,
 * long queries, values of the wrong type, deep nesting, odd headers, methods and paths.
 */
import http from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { langsearchDialect } from '../../src/dialects/langsearch.js';
import { seededRandom } from '../../src/util/random.js';
import { builtInDialects } from '../../src/vendors/registry.js';

export interface HostileRequest {
  method: string;
  /** Path and query string. */
  path: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
  /** The route aimed at, as a template (`/searxng/:key/search`), or `random` for a made-up path. */
  target: string;
  /** A Content-Encoding whose body does not decode: a client error (a 400 since issue 18 item 1; a 500 before). */
  badEncoding: boolean;
}

export interface Target {
  template: string;
  methods: readonly string[];
  operation: 'search' | 'content' | 'rerank' | 'mcp' | 'other';
  /** Body types a POST accepts. */
  form: boolean;
}

/** Routes that are no dialect's: the gateway's own (routes.ts), the MCP server's and the dashboard's. */
const OWN_ROUTES: Target[] = [
  { template: '/healthz', methods: ['GET'], operation: 'other', form: false },
  { template: '/readyz', methods: ['GET'], operation: 'other', form: false },
  { template: '/metrics', methods: ['GET'], operation: 'other', form: false },
  { template: '/v1/openapi.json', methods: ['GET'], operation: 'other', form: false },
  { template: '/mcp', methods: ['POST'], operation: 'mcp', form: false },
  { template: '/.well-known/oauth-protected-resource', methods: ['GET'], operation: 'other', form: false },
  { template: '/dashboard', methods: ['GET'], operation: 'other', form: false },
  { template: '/dashboard/dashboard.js', methods: ['GET'], operation: 'other', form: false },
  { template: '/dashboard/api/session', methods: ['GET', 'POST', 'DELETE'], operation: 'other', form: false },
  { template: '/dashboard/api/keys', methods: ['GET', 'POST'], operation: 'other', form: false },
  { template: '/dashboard/api/keys/:id', methods: ['DELETE'], operation: 'other', form: false },
  { template: '/dashboard/api/usage', methods: ['GET'], operation: 'other', form: false },
];

/** Every route: each dialect's as the dialect declares it, then the gateway's own. */
export function gatewayTargets(): Target[] {
  const dialectRoutes = [langsearchDialect, ...builtInDialects].flatMap((dialect) =>
    dialect.routes.map((route) => ({
      template: route.path,
      methods: route.methods,
      operation: route.operation,
      form: route.bodyTypes?.includes('form') ?? false,
    })),
  );
  return [...dialectRoutes, ...OWN_ROUTES];
}

/** Methods Node's HTTP parser knows (an unknown one never reaches the gateway: issue 18 item 2). */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'SEARCH', 'PURGE', 'MKCOL', 'LOCK'];

/** Field and parameter names of the operations across dialects: most requests set a few of these. */
const FIELDS = [
  'query', 'q', 'count', 'num', 'n', 'offset', 'start', 'page', 'pageno', 'freshness', 'summary', 'text', 'max_characters',
  'documents', 'top_n', 'top_k', 'model', 'return_documents', 'rank_fields', 'max_chunks_per_doc', 'truncation',
  'urls', 'ids', 'max_results', 'numResults', 'search_depth', 'include_domains', 'exclude_domains', 'includeDomains', 'include_raw_content', 'contents', 'format', 'safesearch', 'language', 'time_range', 'dateRestrict',
  'siteSearch', 'cx', 'mkt', 'responseFilter', 'gl', 'hl', 'tbs', 'api_key', 'type', 'startPublishedDate',
];

const WORDS = ['capital', 'France', 'river', 'Seine', 'potassium', 'banana', 'HTTP', 'semantics', 'Lyon', 'cuisine', 'strict', 'mode', 'the', 'of', 'über', '東京', '😀'];

/**
 * Text of about `length` characters, different for each `seed`: distinct documents are what a
 * cache keyed by text cannot hold on to. Built by repetition, so that a megabyte costs little to make.
 */
export function filler(seed: number, length: number): string {
  if (length <= 0) return '';
  const random = seededRandom(seed);
  const words: string[] = [];
  let size = 0;
  while (size < Math.min(length, 4096)) {
    const draw = Math.floor(random() * 2 ** 32);
    const word = draw % 7 === 0 ? String(draw) : WORDS[draw % WORDS.length]!;
    words.push(word);
    size += word.length + 1;
  }
  const chunk = words.join(' ') + ' ';
  return chunk.repeat(Math.ceil(length / chunk.length)).slice(0, length);
}

/** Short strings of every sort: words, any code point (lone surrogates too), control characters. */
const shortText = fc.oneof(
  { weight: 4, arbitrary: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }).map((words) => words.join(' ')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 16 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\u0000', '\ud800', 'null', '-1', '1e309', '<script>', '../../etc/passwd') },
);

/** Up to `maxBytes` characters: mostly short, sometimes long, now and then near the limit. */
const longText = (maxBytes: number) =>
  fc.tuple(fc.nat(), fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 2000 }) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: Math.floor(maxBytes) }) })).map(
    ([seed, length]) => filler(seed, length),
  );

/** A value of any type, for a field that wants one type. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  shortText,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(shortText, { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 8 }), shortText, { maxKeys: 4 }),
);

/** Documents for a rerank: a few short ones, or many, or a few long ones, all within `maxBytes`. */
function documentsOf(maxBytes: number): fc.Arbitrary<unknown> {
  const plain = fc
    .tuple(fc.nat(), fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 1, max: 50 }) }, { weight: 1, arbitrary: fc.integer({ min: 51, max: 1200 }) }), fc.integer({ min: 1, max: 3000 }))
    .map(([seed, count, length]) => {
      // Many documents share the byte budget, so the body stays within the limit.
      const each = Math.max(1, Math.min(length, Math.floor((maxBytes * 0.9) / count) - 8));
      return Array.from({ length: count }, (_, i) => filler(seed + i, each));
    });
  const mixed = fc.array(fc.oneof(shortText, anyValue, fc.record({ text: shortText })), { maxLength: 20 });
  return fc.oneof({ weight: 5, arbitrary: plain }, { weight: 1, arbitrary: mixed }, { weight: 1, arbitrary: anyValue });
}

/** A JSON object close to what the operation reads, with fields of the wrong type or out of range now and then. */
function operationFields(target: Target, maxBytes: number): fc.Arbitrary<Record<string, unknown>> {
  const query = fc.oneof({ weight: 5, arbitrary: shortText }, { weight: 1, arbitrary: longText(maxBytes / 2) }, { weight: 1, arbitrary: anyValue });
  const number = fc.oneof(fc.integer({ min: -5, max: 120 }), anyValue);
  const urls = fc.array(fc.oneof(fc.webUrl(), fc.constantFrom('http://127.0.0.1/x', 'https://example.invalid/', 'ftp://x', 'not a url'), shortText), { maxLength: 6 });
  const base: Record<string, fc.Arbitrary<unknown>> = {
    query,
    q: query,
    count: number,
    num: number,
    freshness: fc.oneof(fc.constantFrom('noLimit', 'oneDay', 'oneWeek', 'oneMonth', 'oneYear', '2024-01-01..2024-02-30', '2025-05-01..2024-01-01'), shortText),
    summary: anyValue,
    model: fc.oneof(fc.constantFrom('service-reranker-v1', 'rerank-english-v3.0', 'rerank-2', 'jina-reranker-v2-base-multilingual', 'nope'), anyValue),
    top_n: number,
    return_documents: anyValue,
    urls,
    ids: urls,
    max_results: number,
    include_domains: fc.array(shortText, { maxLength: 4 }),
  };
  if (target.operation === 'rerank') base.documents = documentsOf(maxBytes);
  if (target.operation === 'mcp') return mcpMessage(maxBytes);
  const known = fc.record(base, { requiredKeys: [] });
  const extra = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 12 })), anyValue, { maxKeys: 4 });
  return fc.tuple(known, extra).map(([fields, more]) => ({ ...more, ...fields }));
}

/** A JSON-RPC message for the MCP endpoint: a tool call, a list, or garbage in JSON-RPC's clothes. */
function mcpMessage(maxBytes: number): fc.Arbitrary<Record<string, unknown>> {
  const argumentsOf = fc.record(
    { query: fc.oneof(shortText, longText(maxBytes / 2)), count: fc.oneof(fc.integer({ min: -1, max: 60 }), anyValue), documents: documentsOf(maxBytes) },
    { requiredKeys: [] },
  );
  return fc.record(
    {
      jsonrpc: fc.oneof({ weight: 5, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: anyValue }),
      id: fc.oneof(fc.integer(), shortText, fc.constant(null)),
      method: fc.oneof(fc.constantFrom('tools/call', 'tools/list', 'initialize', 'ping', 'resources/list'), shortText),
      params: fc.oneof(fc.record({ name: fc.oneof(fc.constantFrom('web_search', 'rerank'), shortText), arguments: fc.oneof(argumentsOf, anyValue) }), anyValue),
    },
    { requiredKeys: ['jsonrpc', 'method'] },
  );
}

type Encoded = { body: Buffer | undefined; contentType: string | undefined; encoding: string | undefined; badEncoding: boolean };

/** Nesting deep enough to trouble a recursive parser or validator. */
const deepJson = fc.integer({ min: 100, max: 20_000 }).map((depth) => '['.repeat(depth) + ']'.repeat(depth));

/** The body as bytes, with the type and encoding it claims (which may be wrong). */
function encodedBody(fields: fc.Arbitrary<Record<string, unknown>>, form: boolean, badEncodings: boolean): fc.Arbitrary<Encoded> {
  const json = fields.map((value) => JSON.stringify(value));
  const text = fc.oneof(
    { weight: 12, arbitrary: json },
    { weight: 1, arbitrary: fc.json({ maxDepth: 4 }) },
    { weight: 1, arbitrary: deepJson },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }) },
    { weight: 1, arbitrary: fc.constantFrom('', '{', '{"query":', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}', 'null', '[]', '"x"', '\ufeff{}') },
    { weight: 1, arbitrary: json.map((value) => value.slice(0, Math.max(0, value.length - 3))) },
  );
  const contentType = fc.oneof(
    { weight: 10, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        'application/json; charset=utf-8',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/json; charset=nope',
        'application/vnd.api+json',
        'text/plain',
        'text/html',
        'multipart/form-data; boundary=x',
        'application/x-www-form-urlencoded',
        'application/octet-stream',
        'a/b/c',
        '',
        'application/json, text/plain',
      ),
    },
  );
  const formBody = fields.map((value) =>
    new URLSearchParams(Object.entries(value).map(([name, field]): [string, string] => [name, typeof field === 'string' ? field : (JSON.stringify(field) ?? '')])).toString(),
  );
  const compressed = fc.constantFrom('gzip', 'deflate', 'br', 'identity');
  const plain = fc.tuple(text, contentType).map(([value, type]): Encoded => ({ body: Buffer.from(value), contentType: type, encoding: undefined, badEncoding: false }));
  const encoded = fc.tuple(json, compressed).map(([value, encoding]): Encoded => ({ body: compress(Buffer.from(value), encoding), contentType: 'application/json', encoding, badEncoding: false }));
  const options: Array<fc.WeightedArbitrary<Encoded>> = [
    { weight: 20, arbitrary: plain },
    { weight: 1, arbitrary: encoded },
    { weight: 1, arbitrary: fc.constantFrom('x-unknown', 'gzip, br', 'compress').chain((encoding) => json.map((value): Encoded => ({ body: Buffer.from(value), contentType: 'application/json', encoding, badEncoding: false }))) },
    { weight: 1, arbitrary: fc.constant<Encoded>({ body: undefined, contentType: undefined, encoding: undefined, badEncoding: false }) },
  ];
  if (form) options.push({ weight: 3, arbitrary: formBody.map((value): Encoded => ({ body: Buffer.from(value), contentType: 'application/x-www-form-urlencoded', encoding: undefined, badEncoding: false })) });
  if (badEncodings) {
    const garbage = fc.tuple(json, fc.constantFrom('gzip', 'deflate', 'br'), fc.boolean()).map(([value, encoding, truncated]): Encoded => {
      const whole = compress(Buffer.from(value), encoding);
      return { body: truncated ? whole.subarray(0, Math.max(1, whole.length >> 1)) : Buffer.from(value), contentType: 'application/json', encoding, badEncoding: true };
    });
    options.push({ weight: 1, arbitrary: garbage });
  }
  return fc.oneof(...options);
}

function compress(body: Buffer, encoding: string): Buffer {
  if (encoding === 'gzip') return gzipSync(body);
  if (encoding === 'deflate') return deflateSync(body);
  if (encoding === 'br') return brotliCompressSync(body);
  return body;
}

/** A concrete path for a route template: a key or a random segment in each parameter, sometimes mangled. */
function pathOf(target: Target, key: string): fc.Arbitrary<string> {
  const segment = fc.oneof(fc.stringMatching(/^[A-Za-z0-9._~-]{1,40}$/), fc.constant('%00'), fc.constant('..'));
  // The key goes only where a client puts a key, so that an answer that quotes it is a leak.
  const filled = fc.tuple(fc.oneof({ weight: 3, arbitrary: fc.constant(key) }, { weight: 1, arbitrary: segment }), segment).map(([keySegment, id]) =>
    target.template.replace(/:key/, keySegment).replace(/:id/, id),
  );
  const mangle = fc.constantFrom<(path: string) => string>(
    (path) => `${path}/`,
    (path) => path.toUpperCase(),
    (path) => path.replace('/', '//'),
    (path) => `${path}/extra`,
    (path) => `${path}%2e%2e/%ff`,
    (path) => `${path};jsessionid=1`,
  );
  return fc.oneof({ weight: 10, arbitrary: filled }, { weight: 1, arbitrary: fc.tuple(filled, mangle).map(([path, change]) => change(path)) });
}

const randomPath = fc
  .array(fc.oneof(fc.stringMatching(/^[A-Za-z0-9._~%-]{1,20}$/), fc.constantFrom('v1', 'v2', 'tavily', 'exa', 'searxng', 'google', 'mcp', 'dashboard', 'api')), { minLength: 0, maxLength: 5 })
  .map((segments) => `/${segments.join('/')}`);

/** A query string of known and unknown parameters; sometimes long. */
function queryString(key: string, maxBytes: number): fc.Arbitrary<string> {
  const value = fc.oneof(
    { weight: 6, arbitrary: shortText },
    { weight: 1, arbitrary: fc.integer({ min: -10, max: 200 }).map(String) },
    // A URL stays under Node's 16 KiB header limit (431 is issue 18 item 2's).
    { weight: 1, arbitrary: longText(Math.min(maxBytes, 4000)) },
  );
  const pair = fc.oneof(
    { weight: 8, arbitrary: fc.tuple(fc.oneof(fc.constantFrom(...FIELDS, 'key'), fc.string({ maxLength: 10 })), value) },
    { weight: 1, arbitrary: fc.constant<[string, string]>(['key', key]) },
  );
  return fc.array(pair, { maxLength: 6 }).map((pairs) => (pairs.length ? `?${new URLSearchParams(pairs).toString()}` : ''));
}

/** Header names and values a client may send: printable ASCII, as Node's client accepts no other. */
const headerName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,30}$/).filter((name) => !RESERVED_HEADERS.has(name.toLowerCase()));
const headerValue = fc.oneof(fc.stringMatching(/^[\x20-\x7e]{0,200}$/), fc.integer({ min: 0, max: 4000 }).map((length) => 'x'.repeat(length)));
/** Headers that frame the message: set from the body, never at random (a wrong length stalls: item 2). */
const RESERVED_HEADERS = new Set(['content-length', 'transfer-encoding', 'host', 'connection', 'expect', 'upgrade', 'content-type', 'content-encoding', 'authorization', 'te', 'trailer', 'keep-alive']);

/** Credentials: mostly the valid key as a Bearer, else none, a wrong one, or a malformed header. */
function authorization(key: string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${key}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom('Bearer sk-wrong-0123456789', 'Bearer ', 'Basic dXNlcjpwYXNz', `bearer  ${key}`, 'Bearer sg_live_xxxxxxxx.yyyyyyyy', 'x') },
    { weight: 1, arbitrary: fc.stringMatching(/^[\x20-\x7e]{0,300}$/) },
  );
}

export interface HostileOptions {
  /** A valid operator key. */
  key: string;
  /** The gateway's server.maxBodyBytes: bodies stay within it (oversize bodies are issue 18 item 3's). */
  maxBodyBytes: number;
  /** Also send compressed bodies that do not decode (a 400 since issue 18 item 1; a 500 before). */
  badEncodings: boolean;
}

/** One hostile request to any route. */
export function hostileRequest({ key, maxBodyBytes, badEncodings }: HostileOptions): fc.Arbitrary<HostileRequest> {
  // The JSON text around the fields, quotes and escapes make a body larger than its strings.
  const budget = Math.floor(maxBodyBytes * 0.6);
  const aimed = fc.oneof(
    ...gatewayTargets().map((target) =>
      fc.record({
        target: fc.constant(target),
        path: pathOf(target, key),
        method: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...target.methods) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
        body: encodedBody(operationFields(target, budget), target.form, badEncodings),
      }),
    ),
  );
  const lost = fc.record({
    target: fc.constant<Target>({ template: 'random', methods: METHODS, operation: 'other', form: false }),
    path: randomPath,
    method: fc.constantFrom(...METHODS),
    body: encodedBody(fc.dictionary(fc.string({ maxLength: 8 }), anyValue, { maxKeys: 4 }), false, badEncodings),
  });
  return fc
    .tuple(
      fc.oneof({ weight: 12, arbitrary: aimed }, { weight: 1, arbitrary: lost }),
      queryString(key, budget),
      authorization(key),
      fc.dictionary(headerName, headerValue, { maxKeys: 4 }),
      fc.constantFrom(undefined, 'application/json', '*/*', 'text/event-stream', 'application/json, text/event-stream', 'text/html', 'x/y;q=bad'),
    )
    .map(([{ target, path, method, body }, query, auth, extra, accept]) => {
      const headers: Record<string, string> = { ...extra };
      if (auth !== undefined) headers.authorization = auth;
      if (accept !== undefined) headers.accept = accept;
      // A body only where Node's client sends one as given (a HEAD's would be dropped).
      const sendsBody = body.body !== undefined && method !== 'HEAD';
      if (sendsBody && body.contentType !== undefined) headers['content-type'] = body.contentType;
      if (sendsBody && body.encoding !== undefined) headers['content-encoding'] = body.encoding;
      const request: HostileRequest = {
        method,
        path: `${path}${query}`,
        headers,
        body: sendsBody && body.body!.length <= maxBodyBytes ? body.body : undefined,
        target: target.template,
        badEncoding: sendsBody && body.badEncoding,
      };
      // How fast-check prints a counterexample: a body may be a megabyte.
      return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) });
    });
}

/** A request in a few lines: method, path, headers and the start of the body. */
export function describeRequest(request: HostileRequest): string {
  const cut = (text: string, length: number) => (text.length > length ? `${text.slice(0, length)}… (${text.length} characters)` : text);
  const body = request.body === undefined ? 'no body' : `${request.body.length} bytes: ${JSON.stringify(cut(request.body.toString('latin1'), 300))}`;
  return `${request.method} ${cut(request.path, 300)} (aimed at ${request.target})\nheaders: ${cut(JSON.stringify(request.headers), 600)}\nbody: ${body}`;
}

export interface HostileAnswer {
  /** null: no answer (reset, or nothing within the timeout). */
  status: number | null;
  headers: http.IncomingHttpHeaders;
  /** The body's first bytes (up to 64 KiB), as text. */
  body: string;
  error?: string;
  ms: number;
}

const KEPT_BODY_BYTES = 65_536;

/** Sends a request as it is (no checks on method, headers or body) and reads the whole answer. */
export function sendHostile(baseUrl: string, request: HostileRequest, { agent, timeoutMs = 60_000 }: { agent?: http.Agent; timeoutMs?: number } = {}): Promise<HostileAnswer> {
  const started = performance.now();
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (answer: Omit<HostileAnswer, 'ms'>) => {
      if (settled) return;
      settled = true;
      resolve({ ...answer, ms: performance.now() - started });
    };
    const headers: Record<string, string> = { ...request.headers };
    if (request.body !== undefined) headers['content-length'] = String(request.body.length);
    const outgoing = http.request(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent: agent ?? false, timeout: timeoutMs },
      (response) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on('data', (chunk: Buffer) => {
          if (kept < KEPT_BODY_BYTES) chunks.push(chunk);
          kept += chunk.length;
        });
        response.on('end', () => finish({ status: response.statusCode ?? null, headers: response.headers, body: Buffer.concat(chunks).subarray(0, KEPT_BODY_BYTES).toString('utf8') }));
        response.on('error', (error) => finish({ status: null, headers: response.headers, body: '', error: error.message }));
      },
    );
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on('error', (error) => finish({ status: null, headers: {}, body: '', error: error.message }));
    outgoing.end(request.body);
  });
}
