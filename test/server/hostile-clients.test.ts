/**
 * Hostile and broken clients on raw sockets against a real gateway (src/server/connections.ts,
 * src/server/body.ts): stalled connections are closed by their limit, with a 408 where a request
 * was under way; malformed requests, oversize bodies and bodies that cannot be decoded get their
 * status and the spec's error body; a refused body does not reset the connection before its answer;
 * health checks are answered beside stalled connections and past the connection limit; and each
 * close by a limit is counted by reason. The limits are set short so that the cases run quickly;
 * the bounds are the limit plus a margin for a loaded machine, a check of behaviour, not of speed.
 */
import net from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import test from 'ava';
import { PROBE_RESERVE, type CloseReason } from '../../src/server/connections.js';
import { TEST_KEY, startGateway, type RunningGateway } from '../helpers/gateway.js';
import { rawExchange, requestHead, stalledConnection, type RawAnswer } from '../helpers/raw-http.js';

/** Long enough that no limit but the one a test is about closes its connection. */
const LONG_MS = 20_000;
/** The slack allowed over a configured limit: node:http checks its timeouts on an interval, and the machine is shared. */
/**
 * Beyond each limit: wide enough for a loaded machine's late timers (seen 3 s late at load 18), far
 * inside the 30 s after which the client gives up; the reason counter says which limit closed it.
 */
const MARGIN_MS = 10_000;
const MAX_BODY_BYTES = 1024;

const relaxed = {
  firstRequestTimeoutMs: LONG_MS,
  headersTimeoutMs: LONG_MS,
  bodyTimeoutMs: LONG_MS,
  keepAliveTimeoutMs: LONG_MS,
};

async function gatewayWith(t: any, server: Record<string, number> = {}): Promise<RunningGateway> {
  const gateway = await startGateway({ server: { maxBodyBytes: MAX_BODY_BYTES, ...relaxed, ...server }, cache: { enabled: false } });
  t.teardown(() => gateway.close());
  return gateway;
}

const searchHead = (headers: Record<string, string>) =>
  requestHead('POST /v1/web-search HTTP/1.1', { host: 'gateway', authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', ...headers });

/** The connections the gateway has closed for `reason`, from /metrics. */
async function closedFor(gateway: RunningGateway, reason: CloseReason): Promise<number> {
  let answer = await rawExchange(gateway.url, requestHead('GET /metrics HTTP/1.1', { host: 'gateway', connection: 'close' }));
  // Past the connection limit's reserve, until the server has counted the closes a test just made.
  for (let attempt = 0; attempt < 20 && answer.status !== 200; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    answer = await rawExchange(gateway.url, requestHead('GET /metrics HTTP/1.1', { host: 'gateway', connection: 'close' }));
  }
  const line = (answer.body as string).split('\n').find((entry) => entry.startsWith(`searchgate_connections_closed_total{reason="${reason}"}`));
  return line ? Number(line.split(' ')[1]) : 0;
}

function expectRefusal(t: any, answer: RawAnswer, status: number, message: string | RegExp) {
  t.is(answer.status, status, JSON.stringify(answer.body));
  t.is(answer.body?.code, String(status));
  if (typeof message === 'string') t.is(answer.body?.message, message);
  else t.regex(answer.body?.message ?? '', message);
  t.is(answer.body?.msg, answer.body?.message);
  t.regex(answer.body?.log_id ?? '', /^[0-9a-f]{32}$/);
  t.is(answer.headers['x-log-id'], answer.body?.log_id);
  t.regex(answer.headers['content-type'] ?? '', /^application\/json/);
}

/** The server closed the connection itself, within `limitMs` and the margin. */
function expectClosedBy(t: any, answer: RawAnswer, limitMs: number) {
  t.true(answer.endedByServer, `the client saw ${answer.error ?? 'no end from the server'}`);
  t.true(answer.closedAfterMs < limitMs + MARGIN_MS, `closed after ${Math.round(answer.closedAfterMs)} ms`);
}

test('a connection that sends nothing is closed after the first-request timeout', async (t) => {
  const gateway = await gatewayWith(t, { firstRequestTimeoutMs: 300 });
  const answer = await rawExchange(gateway.url, '');
  expectClosedBy(t, answer, 300);
  t.true(Number.isNaN(answer.status), 'no answer to a request never made');
  t.is(await closedFor(gateway, 'first_request_timeout'), 1);
});

test('headers that never finish get a 408 after the headers timeout', async (t) => {
  // The first-request timer only counts silence; this client has begun its request.
  const gateway = await gatewayWith(t, { firstRequestTimeoutMs: 200, headersTimeoutMs: 500, bodyTimeoutMs: 500 });
  const answer = await rawExchange(gateway.url, 'POST /v1/web-search HTTP/1.1\r\nhost: gateway\r\ncontent-');
  expectRefusal(t, answer, 408, 'request headers were not received in time');
  t.is(answer.headers.connection, 'close');
  expectClosedBy(t, answer, 500);
  t.is(await closedFor(gateway, 'headers_timeout'), 1);
  t.is(await closedFor(gateway, 'first_request_timeout'), 0);
});

test('the next request on a keep-alive connection is held to the headers timeout too', async (t) => {
  const gateway = await gatewayWith(t, { headersTimeoutMs: 500, bodyTimeoutMs: 500 });
  const answer = await rawExchange(gateway.url, requestHead('GET /healthz HTTP/1.1', { host: 'gateway' }), { afterFirstAnswer: 'GET /healthz HTTP/1.1\r\nhost: gate' });
  t.deepEqual(
    answer.answers.map(({ status, body }) => [status, body.message]),
    [
      [200, undefined],
      [408, 'request headers were not received in time'],
    ],
  );
  expectClosedBy(t, answer, 500);
  t.is(await closedFor(gateway, 'headers_timeout'), 1);
});

test('a body shorter than its Content-Length gets a 408 after the body timeout', async (t) => {
  const gateway = await gatewayWith(t, { headersTimeoutMs: 300, bodyTimeoutMs: 600 });
  const answer = await rawExchange(gateway.url, `${searchHead({ 'content-length': '100' })}{"query":`);
  expectRefusal(t, answer, 408, 'request body was not received in time');
  expectClosedBy(t, answer, 600);
  t.is(await closedFor(gateway, 'body_timeout'), 1);
});

test('a chunked body that never ends gets a 408 after the body timeout', async (t) => {
  const gateway = await gatewayWith(t, { headersTimeoutMs: 300, bodyTimeoutMs: 600 });
  const answer = await rawExchange(gateway.url, `${searchHead({ 'transfer-encoding': 'chunked' })}9\r\n{"query":\r\n`);
  expectRefusal(t, answer, 408, 'request body was not received in time');
  expectClosedBy(t, answer, 600);
  t.is(await closedFor(gateway, 'body_timeout'), 1);
});

test('an idle keep-alive connection is closed after the keep-alive timeout', async (t) => {
  const gateway = await gatewayWith(t, { keepAliveTimeoutMs: 300 });
  const answer = await rawExchange(gateway.url, requestHead('GET /healthz HTTP/1.1', { host: 'gateway' }));
  t.is(answer.status, 200);
  t.deepEqual(answer.body, { status: 'ok' });
  // node:http allows a second over the advertised timeout before it closes.
  expectClosedBy(t, answer, 1300);
  t.is(await closedFor(gateway, 'keep_alive_timeout'), 1);
});

test('a garbage request line gets a 400 and the connection closes at once', async (t) => {
  const gateway = await gatewayWith(t);
  for (const garbage of ['GARBAGE \u0001\u0002 GARBAGE\r\n\r\n', '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003', 'GET / HTTP/9.9.9\r\n\r\n']) {
    const answer = await rawExchange(gateway.url, Buffer.from(garbage, 'latin1'));
    expectRefusal(t, answer, 400, 'malformed HTTP request');
    t.is(answer.headers.connection, 'close');
    // Every timeout is LONG_MS: only the refusal can have closed it.
    expectClosedBy(t, answer, 0);
  }
  // After a request answered on the same connection too.
  const healthz = requestHead('GET /healthz HTTP/1.1', { host: 'gateway' });
  const second = await rawExchange(gateway.url, healthz, { afterFirstAnswer: 'GARBAGE\u0001 GARBAGE\r\n\r\n' });
  t.deepEqual(
    second.answers.map(({ status, body }) => [status, body.message]),
    [
      [200, undefined],
      [400, 'malformed HTTP request'],
    ],
  );
  expectClosedBy(t, second, 0);
  t.is(await closedFor(gateway, 'bad_request'), 4);
  t.false(gateway.logLines.some((line) => line.includes('unhandled error')));
});

test('headers over server.maxHeaderBytes get a 431', async (t) => {
  const gateway = await gatewayWith(t, { maxHeaderBytes: 2048 });
  const fits = await rawExchange(gateway.url, requestHead('GET /healthz HTTP/1.1', { host: 'gateway', connection: 'close', 'x-pad': 'a'.repeat(1500) }));
  t.is(fits.status, 200);
  const answer = await rawExchange(gateway.url, requestHead('GET /healthz HTTP/1.1', { host: 'gateway', 'x-pad': 'a'.repeat(3000) }));
  expectRefusal(t, answer, 431, 'request headers are too large');
  expectClosedBy(t, answer, 0);
  t.is(await closedFor(gateway, 'headers_too_large'), 1);
});

/** A client that keeps sending its body after the answer: it must read a 413, then see the server's FIN, not a reset. */
function expectAnsweredNotReset(t: any, answer: RawAnswer) {
  expectRefusal(t, answer, 413, 'request body is too large');
  t.is(answer.headers.connection, 'close');
  t.false(answer.errorBeforeAnswer, `the client saw ${answer.error} before the answer`);
  t.true(answer.endedByServer, `the client saw ${answer.error ?? 'no end'} instead of the server's FIN`);
  expectClosedBy(t, answer, 0);
}

test('a body over the limit by Content-Length gets a 413 before it is sent, and the connection ends without a reset', async (t) => {
  const gateway = await gatewayWith(t);
  const answer = await rawExchange(gateway.url, searchHead({ 'content-length': String(50 * 1024 * 1024) }), { keepSending: Buffer.alloc(64 * 1024, 'a') });
  expectAnsweredNotReset(t, answer);
  t.is(await closedFor(gateway, 'body_too_large'), 1);
});

test('a chunked body over the limit gets a 413 once the bytes read pass it, and the connection ends without a reset', async (t) => {
  const gateway = await gatewayWith(t);
  // One chunk as large as the whole stream, so that what follows stays well-framed body.
  const answer = await rawExchange(gateway.url, `${searchHead({ 'transfer-encoding': 'chunked' })}${(50 * 1024 * 1024).toString(16)}\r\n`, {
    keepSending: Buffer.alloc(64 * 1024, 'a'),
  });
  expectAnsweredNotReset(t, answer);
  t.is(await closedFor(gateway, 'body_too_large'), 1);
});

test('a client that never stops sending a refused body is cut off after the body timeout', async (t) => {
  const gateway = await gatewayWith(t, { headersTimeoutMs: 300, bodyTimeoutMs: 800 });
  const { port } = new URL(gateway.url);
  const seen = await new Promise<{ status: string; closedAfterMs: number }>((resolve) => {
    const started = performance.now();
    // allowHalfOpen: the client does not end its side when the server ends its own.
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', () => {});
    const sender = setInterval(() => socket.writable && socket.writableLength < 256 * 1024 && socket.write(Buffer.alloc(64 * 1024, 'a')), 2);
    socket.on('close', () => {
      clearInterval(sender);
      resolve({ status: received.split('\r\n')[0]!, closedAfterMs: performance.now() - started });
    });
    socket.write(searchHead({ 'content-length': String(1024 * 1024 * 1024) }));
  });
  t.is(seen.status, 'HTTP/1.1 413 Payload Too Large');
  t.true(seen.closedAfterMs < 800 + MARGIN_MS, `closed after ${Math.round(seen.closedAfterMs)} ms`);
});

test('bodies that do not decode get a 400, an unknown Content-Encoding or charset a 415, each logged as the client error it is', async (t) => {
  const gateway = await gatewayWith(t);
  const body = '{"query":"decoded"}';
  const send = (bytes: Buffer | string, headers: Record<string, string>) =>
    rawExchange(gateway.url, Buffer.concat([Buffer.from(searchHead({ connection: 'close', 'content-length': String(Buffer.byteLength(bytes)), ...headers })), Buffer.from(bytes)]));
  const cases: Array<[string, Buffer | string, Record<string, string>, number, string]> = [
    ['gzip that is not gzip', 'not gzip at all', { 'content-encoding': 'gzip' }, 400, 'request body is not valid gzip data'],
    ['truncated gzip', gzipSync(body).subarray(0, 12), { 'content-encoding': 'gzip' }, 400, 'request body is not valid gzip data'],
    ['gzip with a corrupt block', Buffer.concat([gzipSync(body).subarray(0, 10), Buffer.from([0xff, 0xff, 0xff, 0xff])]), { 'content-encoding': 'gzip' }, 400, 'request body is not valid gzip data'],
    ['deflate that is not deflate', 'not deflate', { 'content-encoding': 'deflate' }, 400, 'request body is not valid deflate data'],
    ['truncated deflate', deflateSync(body).subarray(0, 6), { 'content-encoding': 'deflate' }, 400, 'request body is not valid deflate data'],
    ['br that is not br', Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), { 'content-encoding': 'br' }, 400, 'request body is not valid br data'],
    ['truncated br', brotliCompressSync(body).subarray(0, 5), { 'content-encoding': 'br' }, 400, 'request body is not valid br data'],
    ['unknown encoding', body, { 'content-encoding': 'compress' }, 415, 'unsupported Content-Encoding; gzip, deflate, br or identity are read'],
    ['two encodings', gzipSync(gzipSync(body)), { 'content-encoding': 'gzip, gzip' }, 415, 'unsupported Content-Encoding; gzip, deflate, br or identity are read'],
    ['a charset that is not UTF-8', body, { 'content-type': 'application/json; charset=latin1' }, 415, 'unsupported charset "latin1"; request bodies are read as UTF-8'],
    ['an unknown charset', body, { 'content-type': 'application/json; charset=no-such-charset' }, 415, 'unsupported charset "no-such-charset"; request bodies are read as UTF-8'],
  ];
  for (const [name, bytes, headers, status, message] of cases) {
    const answer = await send(bytes, headers);
    t.is(answer.status, status, name);
    expectRefusal(t, answer, status, message);
  }
  // The codings themselves still work, in any case of their names.
  for (const [coding, bytes] of [
    ['GZIP', gzipSync(body)],
    ['Deflate', deflateSync(body)],
    ['br', brotliCompressSync(body)],
  ] as const) {
    const answer = await send(bytes, { 'content-encoding': coding });
    t.is(answer.status, 200, coding);
    t.is(answer.body.data.queryContext.originalQuery, 'decoded');
  }
  const logged = gateway.logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
  t.false(logged.some((line) => line.msg === 'unhandled error'), 'no failure is logged as unhandled');
  t.deepEqual(
    logged.filter((line) => line.msg === 'request' && (line.status as number) >= 400).map((line) => [line.status, line.error]),
    cases.map(([, , , status, message]) => [status, message]),
  );
});

test('/healthz and /metrics answer beside 300 stalled connections', async (t) => {
  const gateway = await gatewayWith(t);
  const stalls = [
    '',
    'GET /healthz HTTP/1.1\r\nhost: gateway\r\nx-slow: ',
    `${searchHead({ 'content-length': '100' })}{"query":`,
    `${searchHead({ 'transfer-encoding': 'chunked' })}9\r\n{"query":\r\n`,
  ];
  const stalled = await Promise.all(Array.from({ length: 300 }, (_, i) => stalledConnection(gateway.url, stalls[i % stalls.length])));
  t.teardown(() => stalled.forEach(({ socket }) => socket.destroy()));
  const health = await rawExchange(gateway.url, requestHead('GET /healthz HTTP/1.1', { host: 'gateway', connection: 'close' }));
  t.is(health.status, 200);
  t.deepEqual(health.body, { status: 'ok' });
  const metrics = await rawExchange(gateway.url, requestHead('GET /metrics HTTP/1.1', { host: 'gateway', connection: 'close' }));
  t.is(metrics.status, 200);
  const open = Number(/^searchgate_http_connections_open (\d+)/m.exec(metrics.body)?.[1]);
  t.true(open > 300, `${open} connections open`);
  t.true(stalled.every((connection) => connection.isOpen()), 'the stalled connections are still open: their limits are long here');
});

test('past server.maxConnections only health checks and metrics are served; past its reserve connections are closed at once', async (t) => {
  const maxConnections = 3;
  const gateway = await gatewayWith(t, { maxConnections });
  const held = await Promise.all(Array.from({ length: maxConnections }, () => stalledConnection(gateway.url)));
  t.teardown(() => held.forEach(({ socket }) => socket.destroy()));

  const health = await rawExchange(gateway.url, requestHead('GET /healthz HTTP/1.1', { host: 'gateway' }));
  t.is(health.status, 200);
  t.is(health.headers.connection, 'close', 'a probe over the limit does not keep its connection');
  t.true(health.endedByServer);
  const metrics = await rawExchange(gateway.url, requestHead('GET /metrics HTTP/1.1', { host: 'gateway' }));
  t.is(metrics.status, 200);

  const body = '{"query":"q"}';
  const refused = await rawExchange(gateway.url, `${searchHead({ 'content-length': String(body.length) })}${body}`);
  expectRefusal(t, refused, 503, 'too many connections; retry shortly');
  t.is(refused.headers['retry-after'], '1');
  t.true(refused.endedByServer);

  // Fill the reserve: the next connection is closed without a word.
  const reserve = await Promise.all(Array.from({ length: PROBE_RESERVE }, () => stalledConnection(gateway.url)));
  t.teardown(() => reserve.forEach(({ socket }) => socket.destroy()));
  const beyond = await rawExchange(gateway.url, requestHead('GET /healthz HTTP/1.1', { host: 'gateway' }));
  t.true(Number.isNaN(beyond.status));
  reserve.forEach(({ socket }) => socket.destroy());
  await Promise.all(reserve.map(({ closed }) => closed));
  // Counted: the 503 and the connection closed at once.
  t.is(await closedFor(gateway, 'max_connections'), 2);

  held.forEach(({ socket }) => socket.destroy());
  await Promise.all(held.map(({ closed }) => closed));
  // Below the limit again: served as before (the server may still be counting the closes).
  let served: RawAnswer | undefined;
  for (let attempt = 0; attempt < 20 && served?.status !== 200; attempt++) {
    served = await rawExchange(gateway.url, `${searchHead({ 'content-length': String(body.length), connection: 'close' })}${body}`);
    if (served.status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.is(served?.status, 200);
});
