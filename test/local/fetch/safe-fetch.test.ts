import { gzipSync, brotliCompressSync } from 'node:zlib';
import test from 'ava';
import { FetchError, fetchPolicy, safeFetch } from '../../../src/local/fetch/index.js';
import type { FetchPolicy } from '../../../src/local/fetch/index.js';
import { html, redirect, routes, startLoopbackServer } from './loopback-server.js';

/** The tests' own servers are on loopback, which only an explicit opt-in may reach. */
const LOOPBACK_ALLOWED = fetchPolicy({ allowPrivateNetworks: true, timeoutMs: 5_000 });
const never = new AbortController().signal;

async function fetchError(promise: Promise<unknown>): Promise<FetchError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof FetchError) return error;
    throw error;
  }
  throw new Error('expected the fetch to fail');
}

test('fetches a page: final URL, status, content type, headers, and a User-Agent naming searchgate', async (t) => {
  const server = await startLoopbackServer(routes({ '/page': html('<p>hello</p>', 'text/html; charset=iso-8859-1') }));
  t.teardown(() => server.close());
  const page = await safeFetch(`${server.origin}/page#section`, LOOPBACK_ALLOWED, never);
  t.is(page.url, `${server.origin}/page`);
  t.is(page.status, 200);
  t.is(page.contentType, 'text/html; charset=iso-8859-1');
  t.is(page.body.toString(), '<p>hello</p>');
  t.deepEqual(page.redirects, []);
  t.is(page.headers['content-type'], 'text/html; charset=iso-8859-1');
  t.regex(String(server.requests[0]!.headers['user-agent']), /searchgate/);
});

test('follows a redirect chain and reports each hop', async (t) => {
  const server = await startLoopbackServer(
    routes({ '/a': redirect('/b', 301), '/b': redirect('./c', 307), '/c': redirect(`/final?x=1`, 308), '/final?x=1': html('done') }),
  );
  t.teardown(() => server.close());
  const page = await safeFetch(`${server.origin}/a`, LOOPBACK_ALLOWED, never);
  t.is(page.url, `${server.origin}/final?x=1`);
  t.is(page.body.toString(), 'done');
  t.deepEqual(page.redirects, [`${server.origin}/a`, `${server.origin}/b`, `${server.origin}/c`]);
});

test('stops after the policy\'s number of redirects', async (t) => {
  const server = await startLoopbackServer((request, response) => redirect(`/loop${Number(request.url!.slice(5) || 0) + 1}`)(response));
  t.teardown(() => server.close());
  const error = await fetchError(safeFetch(`${server.origin}/loop0`, { ...LOOPBACK_ALLOWED, maxRedirects: 3 }, never));
  t.is(error.kind, 'too_many_redirects');
  t.is(server.requests.length, 4);
});

test('a redirect the caller declines is not followed', async (t) => {
  const server = await startLoopbackServer(routes({ '/a': redirect('/elsewhere'), '/elsewhere': html('no') }));
  t.teardown(() => server.close());
  const error = await fetchError(
    safeFetch(`${server.origin}/a`, LOOPBACK_ALLOWED, never, { followRedirect: (to) => !to.endsWith('/elsewhere') }),
  );
  t.is(error.kind, 'redirect_refused');
  t.deepEqual(server.paths(), ['/a']);
});

test('refuses non-http schemes, also as a redirect target', async (t) => {
  t.is((await fetchError(safeFetch('file:///etc/passwd', LOOPBACK_ALLOWED, never))).kind, 'invalid_url');
  const server = await startLoopbackServer(routes({ '/a': redirect('file:///etc/passwd') }));
  t.teardown(() => server.close());
  t.is((await fetchError(safeFetch(`${server.origin}/a`, LOOPBACK_ALLOWED, never))).kind, 'invalid_url');
});

test('a page slower than the time limit fails with "timeout", promptly', async (t) => {
  const server = await startLoopbackServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.write('<p>the start arrives, the rest never does');
  });
  t.teardown(() => server.close());
  const started = performance.now();
  const error = await fetchError(safeFetch(`${server.origin}/slow`, { ...LOOPBACK_ALLOWED, timeoutMs: 300 }, never));
  t.is(error.kind, 'timeout');
  t.true(performance.now() - started < 2_000);
});

test('the caller\'s signal aborts a fetch with "aborted"', async (t) => {
  const server = await startLoopbackServer(() => {});
  t.teardown(() => server.close());
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 50);
  t.is((await fetchError(safeFetch(`${server.origin}/`, LOOPBACK_ALLOWED, controller.signal))).kind, 'aborted');
});

test('a body over the size cap fails with "too_large", whether declared or streamed', async (t) => {
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const server = await startLoopbackServer(
    routes({
      '/declared': (response) => {
        response.setHeader('content-length', String(8 * 1024 * 1024));
        response.write(chunk);
      },
      // Chunked, no length: the cap has to be counted as the body arrives.
      '/streamed': (response) => {
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024 && response.write(chunk)) sent += chunk.length;
          if (sent < 8 * 1024 * 1024) response.once('drain', pump);
          else response.end();
        };
        pump();
      },
    }),
  );
  t.teardown(() => server.close());
  const policy: FetchPolicy = { ...LOOPBACK_ALLOWED, maxBytes: 1024 * 1024 };
  t.is((await fetchError(safeFetch(`${server.origin}/declared`, policy, never))).kind, 'too_large');
  const error = await fetchError(safeFetch(`${server.origin}/streamed`, policy, never));
  t.is(error.kind, 'too_large');
  t.regex(error.message, /1048576 bytes/);
});

test('a gzip bomb stops at the decompressed-size cap', async (t) => {
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024)); // ~64 KB on the wire, 64 MB inflated
  const server = await startLoopbackServer((_request, response) => {
    response.setHeader('content-type', 'text/html');
    response.setHeader('content-encoding', 'gzip');
    response.end(bomb);
  });
  t.teardown(() => server.close());
  const before = process.memoryUsage().rss;
  const error = await fetchError(safeFetch(`${server.origin}/bomb`, { ...LOOPBACK_ALLOWED, maxDecodedBytes: 2 * 1024 * 1024 }, never));
  t.is(error.kind, 'too_large');
  t.regex(error.message, /decompresses to more than 2097152 bytes/);
  // Nothing near the inflated size was ever held.
  t.true(process.memoryUsage().rss - before < 100 * 1024 * 1024);
});

test('gzip, deflate and brotli bodies are decoded; an unknown coding is an error', async (t) => {
  const text = '<p>compressed page</p>'.repeat(50);
  const server = await startLoopbackServer(
    routes({
      '/gzip': (response) => response.setHeader('content-encoding', 'gzip').end(gzipSync(text)),
      '/br': (response) => response.setHeader('content-encoding', 'br').end(brotliCompressSync(text)),
      '/twice': (response) => response.setHeader('content-encoding', 'gzip, br').end(brotliCompressSync(gzipSync(text))),
      '/zstd': (response) => response.setHeader('content-encoding', 'zstd').end('??'),
      '/corrupt': (response) => response.setHeader('content-encoding', 'gzip').end('not gzip at all'),
    }),
  );
  t.teardown(() => server.close());
  for (const path of ['/gzip', '/br', '/twice']) {
    t.is((await safeFetch(`${server.origin}${path}`, LOOPBACK_ALLOWED, never)).body.toString(), text, path);
  }
  t.regex(String(server.requests[0]!.headers['accept-encoding']), /gzip/);
  t.is((await fetchError(safeFetch(`${server.origin}/zstd`, LOOPBACK_ALLOWED, never))).kind, 'bad_encoding');
  t.is((await fetchError(safeFetch(`${server.origin}/corrupt`, LOOPBACK_ALLOWED, never))).kind, 'bad_encoding');
});
