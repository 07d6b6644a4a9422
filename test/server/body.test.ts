/**
 * The request body reader (src/server/body.ts): an uncompressed `application/json` body is read by
 * its own lean path; every other body by koa-bodyparser, as before. Each error case, the size limit
 * at its edges, the encodings and media types; and, sent both ways, the same bytes get the same answer.
 */
import net from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import test from 'ava';
import { byteLimit, parseStrictJson } from '../../src/server/body.js';
import { TEST_KEY, searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig } from '../helpers/gateway.js';
import { rawExchange, requestHead } from '../helpers/raw-http.js';

const LIMIT = 1024;

async function setup(t: any) {
  const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope([{ url: 'https://a.example/', name: 'A', snippet: 's' }])));
  const gateway = await startGateway({ ...upstreamConfig(upstream.url), server: { maxBodyBytes: LIMIT }, cache: { enabled: false } });
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  return { gateway, upstream };
}

interface Answer {
  status: number;
  body: any;
}

/** A request written byte for byte on a socket, so that its headers and framing are exactly as given. */
function raw(url: string, head: Record<string, string>, body: Buffer | string = '', path = '/v1/web-search'): Promise<Answer> {
  const { port } = new URL(url);
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  // Connection: close: the server closes once it has answered (a client that half-closes first
  // would have its request aborted).
  const headers = { host: `127.0.0.1:${port}`, connection: 'close', authorization: `Bearer ${TEST_KEY}`, ...head };
  return rawExchange(url, Buffer.concat([Buffer.from(requestHead(`POST ${path} HTTP/1.1`, headers)), bytes]));
}

/** A body with Content-Length, as clients send JSON. */
const json = (url: string, body: Buffer | string, type = 'application/json', extra: Record<string, string> = {}) =>
  raw(url, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)), ...extra }, body);

/** The same body sent chunked (no Content-Length). */
const chunked = (url: string, body: string, type = 'application/json') => {
  const bytes = Buffer.from(body);
  const framed = Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n0\r\n\r\n')]);
  return raw(url, { 'content-type': type, 'transfer-encoding': 'chunked' }, framed);
};

function expectError(t: any, answer: Answer, status: number, message: string) {
  t.is(answer.status, status, JSON.stringify(answer.body));
  t.is(answer.body.message, message);
  t.is(answer.body.code, String(status));
}

test('parseStrictJson reads what co-body reads in strict mode', (t) => {
  t.deepEqual(parseStrictJson('{"query":"q"}'), { query: 'q' });
  t.deepEqual(parseStrictJson(' \n\t\r[1,2]'), [1, 2]);
  t.deepEqual(parseStrictJson(''), {}, 'an empty body is {}');
  t.deepEqual(parseStrictJson('\ufeff{"a":1}'), { a: 1 }, 'a byte order mark is dropped');
  t.deepEqual(parseStrictJson('{"query":"\\"__proto__\\": 1"}'), { query: '"__proto__": 1' }, 'the word inside a string is no key');
  t.deepEqual(parseStrictJson('{"constructor":{"prototype":{"x":1}}}'), { constructor: { prototype: { x: 1 } } });
  for (const text of [' ', '"s"', '1', 'null', 'true', '{"a":', '{"a":1} x', '\ufeff\ufeff{}', '\u00a0{}']) {
    t.throws(() => parseStrictJson(text), { instanceOf: SyntaxError }, JSON.stringify(text));
  }
  for (const text of [
    '{"__proto__":{"x":1}}',
    '{"a":{"b":[{"__proto__":1}]}}',
    '{"\\u005f_proto__":1}',
    '{"__proto\\u005F_" :1}',
    '[{"__proto__":null}]',
  ]) {
    t.throws(() => parseStrictJson(text), { instanceOf: SyntaxError, message: /prototype/ }, text);
  }
});

test('byteLimit reads a limit as the bytes package does', (t) => {
  t.is(byteLimit(1024), 1024);
  t.is(byteLimit('1024'), 1024);
  t.is(byteLimit('16kb'), 16 * 1024);
  t.is(byteLimit('16KB'), 16 * 1024);
  t.is(byteLimit('1.5mb'), Math.floor(1.5 * 1024 * 1024));
  t.is(byteLimit('2 gb'), 2 * 1024 ** 3);
});

test('a JSON body up to the limit is read; one byte more is a 413, whether declared or streamed', async (t) => {
  const { gateway } = await setup(t);
  // {"query":"qqq…"} is 12 bytes around the query.
  const atLimit = JSON.stringify({ query: 'q'.repeat(LIMIT - 12) });
  const overLimit = JSON.stringify({ query: 'q'.repeat(LIMIT - 11) });
  t.is(Buffer.byteLength(atLimit), LIMIT);
  t.is((await json(gateway.url, atLimit)).status, 200);
  expectError(t, await json(gateway.url, overLimit), 413, 'request body is too large');
  t.is((await chunked(gateway.url, atLimit)).status, 200);
  expectError(t, await chunked(gateway.url, overLimit), 413, 'request body is too large');
  // A Content-Length over the limit is refused before a byte of the body is read.
  expectError(t, await raw(gateway.url, { 'content-type': 'application/json', 'content-length': String(LIMIT + 1) }), 413, 'request body is too large');
  t.is((await gateway.post('/v1/web-search', { query: 'still serving' })).status, 200);
});

test('every malformed JSON body is a 400 that says so', async (t) => {
  const { gateway, upstream } = await setup(t);
  for (const body of ['{"query": ', '"just a string"', '42', 'null', '   ', '{"query":"q"} trailing', '{"query":"q","__proto__":{"x":1}}', '{"query":"q","\\u005f_proto__":1}']) {
    expectError(t, await json(gateway.url, body), 400, 'request body is not a valid JSON object');
  }
  expectError(t, await json(gateway.url, '[1,2]'), 400, 'request body must be a JSON object');
  t.is(upstream.requests.length, 0, 'no upstream is asked');
});

test('an empty body or none reads as {}; a byte order mark is dropped; UTF-8 is read, any other charset is a 415', async (t) => {
  const { gateway } = await setup(t);
  expectError(t, await json(gateway.url, ''), 400, 'query is required');
  expectError(t, await raw(gateway.url, { 'content-type': 'application/json' }), 400, 'query is required');
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"query":"bom"}')]);
  t.is((await json(gateway.url, bom)).body.data.queryContext.originalQuery, 'bom');
  for (const type of ['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset="utf8"', 'application/json; charset=us-ascii']) {
    t.is((await json(gateway.url, '{"query":"café ☕"}', type)).body.data.queryContext.originalQuery, 'café ☕', type);
  }
  // Read as UTF-8, these bytes would be another text than the client meant.
  for (const charset of ['latin1', 'utf-16', 'no-such-charset']) {
    expectError(t, await json(gateway.url, '{"query":"café"}', `application/json; charset=${charset}`), 415, `unsupported charset "${charset}"; request bodies are read as UTF-8`);
  }
  const invalid = Buffer.concat([Buffer.from('{"query":"a'), Buffer.from([0xff]), Buffer.from('b"}')]);
  t.is((await json(gateway.url, invalid)).body.data.queryContext.originalQuery, 'a\ufffdb', 'invalid UTF-8 becomes U+FFFD');
});

test('compressed bodies are inflated (gzip, deflate, br); an unknown Content-Encoding is a 415', async (t) => {
  const { gateway } = await setup(t);
  const body = '{"query":"compressed"}';
  for (const [encoding, bytes] of [
    ['gzip', gzipSync(body)],
    ['deflate', deflateSync(body)],
    ['br', brotliCompressSync(body)],
    ['identity', Buffer.from(body)],
  ] as const) {
    const answer = await json(gateway.url, bytes, 'application/json', { 'content-encoding': encoding });
    t.is(answer.status, 200, encoding);
    t.is(answer.body.data.queryContext.originalQuery, 'compressed');
  }
  // The limit applies to the inflated body.
  const inflated = gzipSync(JSON.stringify({ query: 'q'.repeat(3 * LIMIT) }));
  t.true(inflated.length < LIMIT);
  expectError(t, await json(gateway.url, inflated, 'application/json', { 'content-encoding': 'gzip' }), 413, 'request body is too large');
  expectError(t, await json(gateway.url, body, 'application/json', { 'content-encoding': 'compress' }), 415, 'unsupported Content-Encoding; gzip, deflate, br or identity are read');
  expectError(t, await json(gateway.url, 'not gzip', 'application/json', { 'content-encoding': 'gzip' }), 400, 'request body is not valid gzip data');
});

test('media types: JSON and +json types are taken, others are a 415 before the body is read', async (t) => {
  const { gateway } = await setup(t);
  const body = '{"query":"typed"}';
  for (const type of ['application/vnd.api+json', 'application/ld+json', 'application/problem+json; charset=utf-8']) {
    t.is((await json(gateway.url, body, type)).body.data.queryContext.originalQuery, 'typed', type);
  }
  t.is((await json(gateway.url, body, 'application/json;')).status, 200);
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'Application/JSON', 'multipart/form-data; boundary=x']) {
    expectError(t, await json(gateway.url, body, type), 415, `Content-Type must be application/json, not ${type}`);
  }
  expectError(t, await raw(gateway.url, { 'content-length': String(body.length) }, body), 415, 'Content-Type must be application/json');
});

test('a body whose client hangs up before its end is a 400 in the log, and the server keeps serving', async (t) => {
  const { gateway } = await setup(t);
  const { port } = new URL(gateway.url);
  await new Promise<void>((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST /v1/web-search HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TEST_KEY}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"query":`,
      );
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve());
  });
  const deadline = Date.now() + 2000;
  let line: Record<string, unknown> | undefined;
  while (!line && Date.now() < deadline) {
    line = gateway.logLines.map((entry) => JSON.parse(entry) as Record<string, unknown>).find((entry) => entry.status === 400);
    if (!line) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.like(line, { status: 400, error: 'request body was not received completely' });
  t.is((await gateway.post('/v1/web-search', { query: 'after' })).status, 200);
});

test('the lean reader and koa-bodyparser answer the same bytes alike', async (t) => {
  const { gateway } = await setup(t);
  // `charset=us-ascii` is not among the Content-Type values the lean reader takes, so those go to
  // koa-bodyparser, which reads any charset as UTF-8 just the same.
  const bodies = [
    '{"query":"same"}',
    '{"query":"  spaced  ","count":3}',
    '\ufeff{"query":"bom"}',
    '',
    ' ',
    '"s"',
    '[]',
    '{"query":',
    '{"query":"q","__proto__":{}}',
    '{"query":"q","nested":{"__proto__":{}}}',
    '{"query":"é ☕ \\u2028"}',
    JSON.stringify({ query: 'q'.repeat(LIMIT) }),
  ];
  for (const body of bodies) {
    const lean = await json(gateway.url, body);
    const parser = await json(gateway.url, body, 'application/json; charset=us-ascii');
    t.is(lean.status, parser.status, JSON.stringify(body));
    const comparable = (answer: Answer) => JSON.stringify(answer.body).replace(/"log_id":"[0-9a-f]{32}"/, '');
    t.is(comparable(lean), comparable(parser), JSON.stringify(body));
  }
});
