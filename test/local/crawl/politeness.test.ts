/**
 * Per-host politeness. Start times are read where the crawler starts each request (its resolver
 * call), which only the crawler controls; the server's arrival times are checked too, with room
 * for the test process itself being descheduled (the server shares its event loop, so a stall
 * there makes two requests that arrived apart look simultaneous).
 */
import test from 'ava';
import type { ExecutionContext } from 'ava';
import { crawl } from '../../../src/local/crawl/index.js';
import { ExtractorPool } from '../../../src/local/extract/index.js';
import { fetchPolicy } from '../../../src/local/fetch/index.js';
import type { Resolver } from '../../../src/local/fetch/index.js';
import { article, html, routes, startLoopbackServer } from '../fetch/loopback-server.js';
import type { Handler, LoopbackServer } from '../fetch/loopback-server.js';

// setTimeout fires on whole milliseconds, and starts are read in the resolver, a few async steps after the crawler starts a request; on a loaded
// machine those steps can lag one request more than the next, so the read gap can undershoot the real one.
const TIMER_SLACK_MS = 25;

/** Crawls `http://polite.test:<port>/` (resolved to the test server) and returns when each request started. */
async function crawlTimed(t: ExecutionContext, handler: Handler, options: { minDelayMs: number; perHostConcurrency: number }) {
  const server = await startLoopbackServer(handler);
  t.teardown(() => server.close());
  const starts: number[] = [];
  const resolve: Resolver = async () => {
    starts.push(performance.now());
    return [{ address: '127.0.0.1', family: 4 }];
  };
  // Extraction off the event loop, as the CLI does it.
  const extractor = new ExtractorPool({ size: 1 });
  t.teardown(() => extractor.close());
  await crawl(
    { seeds: [{ url: `http://polite.test:${server.port}/`, kind: 'page' }], fetchPolicy: fetchPolicy({ allowPrivateNetworks: true, resolve }), extractor, ...options },
    async () => {},
  );
  return { server, starts };
}

function assertSpaced(t: ExecutionContext, starts: number[], server: LoopbackServer, delayMs: number, count: number): void {
  t.is(starts.length, count);
  t.is(server.requests.length, count);
  for (let i = 1; i < starts.length; i += 1) {
    t.true(starts[i]! - starts[i - 1]! >= delayMs - TIMER_SLACK_MS, `start gap ${i}: ${(starts[i]! - starts[i - 1]!).toFixed(1)} ms`);
  }
  const arrivals = server.requests.map((request) => request.at);
  const span = arrivals.at(-1)! - arrivals[0]!;
  t.true(span >= (count - 1) * delayMs * 0.8, `arrivals spread over ${span.toFixed(0)} ms`);
}

test.serial('requests to one host start at least the delay apart, and no more than its concurrency are open at once', async (t) => {
  let open = 0;
  let mostOpen = 0;
  const links = ['/p1', '/p2', '/p3', '/p4', '/p5'];
  const { server, starts } = await crawlTimed(
    t,
    async (request, response) => {
      open += 1;
      mostOpen = Math.max(mostOpen, open);
      // Slower than the delay, so that two requests overlap.
      await new Promise((resolve) => setTimeout(resolve, 200));
      open -= 1;
      if (request.url === '/robots.txt') response.writeHead(404).end();
      else html(article(`page ${request.url}`, { links: request.url === '/' ? links : [] }))(response);
    },
    { minDelayMs: 150, perHostConcurrency: 2 },
  );
  assertSpaced(t, starts, server, 150, 7);
  t.is(mostOpen, 2);
});

test.serial('a Crawl-delay in robots.txt spaces requests and allows one at a time, whatever was configured', async (t) => {
  const { server, starts } = await crawlTimed(
    t,
    routes({
      '/robots.txt': html('User-agent: searchgate\nCrawl-delay: 0.3\n', 'text/plain'),
      '/': html(article('start', { links: ['/x', '/y'] })),
      '/x': html(article('x')),
      '/y': html(article('y')),
    }),
    { minDelayMs: 0, perHostConcurrency: 4 },
  );
  assertSpaced(t, starts, server, 300, 4);
});
