import test from 'ava';
import { loadRobots } from '../../../src/local/crawl/index.js';
import type { FetchedResource } from '../../../src/local/fetch/index.js';
import { FetchError } from '../../../src/local/fetch/index.js';

const never = new AbortController().signal;

function answering(status: number, body = ''): (url: string) => Promise<FetchedResource> {
  return async (url) => ({ url, status, contentType: 'text/plain', body: Buffer.from(body), redirects: [], headers: {} });
}

test('the group naming searchgate wins over "*", with its own Crawl-delay', async (t) => {
  const robots = await loadRobots(
    'https://example.org',
    answering(200, 'User-agent: *\nDisallow: /\nCrawl-delay: 10\n\nUser-agent: SearchGate\nDisallow: /drafts/\nAllow: /drafts/published\nCrawl-delay: 2\n'),
    never,
  );
  t.true(robots.isAllowed('https://example.org/articles/1'));
  t.false(robots.isAllowed('https://example.org/drafts/2'));
  t.true(robots.isAllowed('https://example.org/drafts/published'));
  t.is(robots.crawlDelayMs, 2000);
});

test('other agents\' rules do not apply to us; "*" does', async (t) => {
  const robots = await loadRobots('https://example.org', answering(200, 'User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n'), never);
  t.true(robots.isAllowed('https://example.org/'));
  t.false(robots.isAllowed('https://example.org/private/x'));
  t.is(robots.crawlDelayMs, null);
});

test('4xx allows everything; 5xx and an unreachable server allow nothing', async (t) => {
  t.true((await loadRobots('https://example.org', answering(404), never)).isAllowed('https://example.org/x'));
  t.true((await loadRobots('https://example.org', answering(403), never)).isAllowed('https://example.org/x'));
  t.false((await loadRobots('https://example.org', answering(503), never)).isAllowed('https://example.org/x'));
  const unreachable = await loadRobots(
    'https://example.org',
    async (url) => {
      throw new FetchError('network', 'connection failed (ECONNREFUSED)', url);
    },
    never,
  );
  t.false(unreachable.isAllowed('https://example.org/x'));
  t.regex(unreachable.source, /ECONNREFUSED/);
});
