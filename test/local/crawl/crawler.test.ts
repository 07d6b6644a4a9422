import { mkdtempSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import iconv from 'iconv-lite';
import { crawl } from '../../../src/local/crawl/index.js';
import type { CrawlOptions, CrawlSeed } from '../../../src/local/crawl/index.js';
import { fetchPolicy } from '../../../src/local/fetch/index.js';
import type { IndexedPage } from '../../../src/local/types.js';
import { article, html, redirect, routes, startLoopbackServer } from '../fetch/loopback-server.js';
import type { LoopbackServer } from '../fetch/loopback-server.js';

/** The tests' sites are on loopback, which only an explicit opt-in may reach. */
const LOOPBACK_ALLOWED = fetchPolicy({ allowPrivateNetworks: true, timeoutMs: 5_000 });

async function crawlOnce(server: LoopbackServer, seeds: Array<string | CrawlSeed>, options: Partial<CrawlOptions> = {}) {
  const stored: IndexedPage[] = [];
  const summary = await crawl(
    {
      seeds: seeds.map((seed) => (typeof seed === 'string' ? { url: `${server.origin}${seed}`, kind: 'page' as const } : seed)),
      fetchPolicy: LOOPBACK_ALLOWED,
      minDelayMs: 0,
      ...options,
    },
    async (page) => {
      stored.push(page);
    },
  );
  return { stored, summary, paths: stored.map((page) => new URL(page.url).pathname + new URL(page.url).search).sort() };
}

test('crawls a site within robots.txt: disallowed and nofollow paths are never fetched, links are deduped', async (t) => {
  const server = await startLoopbackServer(
    routes({
      '/robots.txt': html('User-agent: *\nDisallow: /private\n', 'text/plain'),
      '/': html(article('home', { links: ['/a', '/b', '/private/secret', 'mailto:x@example.com', 'http://elsewhere.invalid/'] })),
      '/a': html(article('alpha', { links: ['/b', '/a?utm_source=newsletter', '/a#top', '/'] })),
      '/b': html(article('beta', { body: `${'<p>beta text, long enough to be a main text of its own for the extractor to keep. </p>'.repeat(3)}<p><a href="/nofollowed" rel="nofollow">skip</a> <a href="/ugc" rel="ugc external">skip too</a></p>` })),
      '/private/secret': html(article('secret')),
      '/nofollowed': html(article('nofollowed')),
      '/ugc': html(article('ugc')),
    }),
  );
  t.teardown(() => server.close());
  const { paths, summary, stored } = await crawlOnce(server, ['/']);
  t.deepEqual(paths, ['/', '/a', '/b']);
  t.deepEqual(server.paths().sort(), ['/', '/a', '/b', '/robots.txt']);
  t.is(summary.blocked, 1);
  t.is(summary.stored, 3);
  t.true(summary.complete);
  const home = stored.find((page) => page.url === `${server.origin}/`)!;
  t.is(home.title, 'home');
  t.is(home.domain, '127.0.0.1');
  t.regex(home.contentHash, /^[0-9a-f]{64}$/);
  t.regex(home.text, /Paragraph 1 about home/);
});

test('a robots.txt that answers 5xx allows nothing; one that 404s allows everything', async (t) => {
  const down = await startLoopbackServer(routes({ '/robots.txt': (response) => response.writeHead(503).end(), '/': html(article('down')) }));
  const none = await startLoopbackServer(routes({ '/': html(article('open')) }));
  t.teardown(() => Promise.all([down.close(), none.close()]));
  const blocked = await crawlOnce(down, ['/']);
  t.deepEqual(down.paths(), ['/robots.txt']);
  t.is(blocked.summary.blocked, 1);
  t.deepEqual((await crawlOnce(none, ['/'])).paths, ['/']);
});

test('sitemap seeds: a sitemap index, a gzipped sitemap and a plain one', async (t) => {
  const server = await startLoopbackServer(
    routes({
      '/sitemap_index.xml': (response) =>
        html(
          `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>${server.origin}/sitemap-1.xml.gz</loc></sitemap><sitemap><loc>${server.origin}/sitemap-2.xml</loc></sitemap>
  <sitemap><loc>http://elsewhere.invalid/sitemap.xml</loc></sitemap></sitemapindex>`,
          'application/xml',
        )(response),
      '/sitemap-1.xml.gz': (response) =>
        response
          .setHeader('content-type', 'application/gzip')
          .end(gzipSync(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${server.origin}/one</loc></url><url><loc>${server.origin}/two?b=2&amp;a=1</loc></url></urlset>`)),
      '/sitemap-2.xml': (response) =>
        html(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc> ${server.origin}/three </loc></url></urlset>`, 'text/xml')(response),
      '/one': html(article('one', { links: ['/not-in-sitemap'] })),
      '/two?a=1&b=2': html(article('two')),
      '/three': html(article('three')),
      '/not-in-sitemap': html(article('linked')),
    }),
  );
  t.teardown(() => server.close());
  const { paths } = await crawlOnce(server, [{ url: `${server.origin}/sitemap_index.xml`, kind: 'sitemap' }], { maxDepth: 0 });
  t.deepEqual(paths, ['/one', '/three', '/two?a=1&b=2']);
  t.false(server.paths().includes('/not-in-sitemap'));
});

test('redirects are followed and the page is stored under where they led; a canonical elsewhere on the site is its identity', async (t) => {
  const server = await startLoopbackServer(
    routes({
      '/': html(article('start', { links: ['/old', '/new', '/variant', '/foreign-canonical', '/leave'] })),
      '/old': redirect('/older', 301),
      '/older': redirect('/new', 302),
      '/new': html(article('moved')),
      '/variant': html(article('variant', { head: '<link rel="canonical" href="/canonical-target">' })),
      '/foreign-canonical': html(article('foreign', { head: '<link rel="canonical" href="http://elsewhere.invalid/taken">' })),
      '/leave': redirect('http://elsewhere.invalid/'),
    }),
  );
  t.teardown(() => server.close());
  const { stored, summary } = await crawlOnce(server, ['/'], { perHostConcurrency: 1 });
  const byTitle = new Map(stored.map((page) => [page.title, page]));
  t.is(byTitle.get('moved')!.url, `${server.origin}/new`);
  // A crawled page is stored with its markdown too, for requests that ask for it.
  t.regex(byTitle.get('moved')!.markdown ?? '', /^Paragraph 2 about moved: moved is described here/m);
  t.is(byTitle.get('variant')!.url, `${server.origin}/variant`);
  t.is(byTitle.get('variant')!.canonicalUrl, `${server.origin}/canonical-target`);
  // Naming another site's URL as canonical must not take over that site's entry.
  t.is(byTitle.get('foreign')!.canonicalUrl, `${server.origin}/foreign-canonical`);
  t.is(stored.filter((page) => page.title === 'moved').length, 1);
  t.is(server.paths().filter((path) => path === '/new').length, 1, 'the redirect target is not fetched again when linked directly');
  t.false(server.paths().includes('/canonical-target'));
  t.is(summary.errors, 1, 'the redirect off the site is not followed');
});

test('exact and near duplicates: the same text under two URLs is stored once', async (t) => {
  const sharedBody = `${'<p>The shared story appears on two URLs with the very same words, which makes it a duplicate for the index. </p>'.repeat(3)}`;
  const server = await startLoopbackServer(
    routes({
      '/': html(article('start', { links: ['/story', '/story-print', '/story?utm_campaign=x', '/copy'] })),
      '/story': html(article('story', { body: sharedBody, nav: 'Home | News | Sport' })),
      // A near duplicate: other boilerplate around the same main text, wrapped differently.
      '/story-print': html(article('story', { body: sharedBody.replaceAll(' with ', '\n   with '), nav: 'Print view | Back to the story | Share' })),
      '/copy': html(article('story', { body: sharedBody.toUpperCase() })),
    }),
  );
  t.teardown(() => server.close());
  const { stored, summary } = await crawlOnce(server, ['/'], { perHostConcurrency: 1 });
  t.is(stored.filter((page) => page.text.includes('shared story')).length, 1);
  t.is(summary.duplicates, 2);
  t.is(server.paths().filter((path) => path.startsWith('/story?')).length, 0, 'the tracking-parameter spelling is the same URL');
});

test('a challenge page is never stored, a noindex page is not stored but its links are followed', async (t) => {
  const server = await startLoopbackServer(
    routes({
      '/': html(article('start', { links: ['/challenge', '/noindex'] })),
      '/challenge': (response) => {
        // Challenge interstitials come with 403 or 503; this one must be judged by its content.
        response.statusCode = 200;
        html(
          `<!doctype html><html><head><title>Just a moment...</title></head><body><div id="challenge-running">Checking if the site connection is secure</div>
<noscript>Enable JavaScript and cookies to continue</noscript><script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script></body></html>`,
        )(response);
      },
      '/noindex': html(article('hidden', { head: '<meta name="robots" content="noindex">', links: ['/behind'] })),
      '/behind': html(article('behind')),
    }),
  );
  t.teardown(() => server.close());
  const { paths, summary } = await crawlOnce(server, ['/']);
  t.deepEqual(paths, ['/', '/behind']);
  t.true(server.paths().includes('/challenge'));
  t.is(summary.skipped, 1);
});

test('a page in windows-1252 declared only in a <meta> is decoded right', async (t) => {
  const text = 'Caf\u00e9 cr\u00e8me \u2013 \u201cquoted\u201d, \u20ac5 for a na\u00efve visitor. ';
  const page = `<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252"><title>Caf\u00e9</title></head>
<body><article><p>${text.repeat(6)}</p><p>${text.repeat(5)}</p></article></body></html>`;
  const server = await startLoopbackServer(routes({ '/': (response) => response.setHeader('content-type', 'text/html').end(iconv.encode(page, 'windows-1252')) }));
  t.teardown(() => server.close());
  const { stored } = await crawlOnce(server, ['/']);
  t.is(stored[0]!.title, 'Caf\u00e9');
  t.true(stored[0]!.text.includes('Caf\u00e9 cr\u00e8me \u2013 \u201cquoted\u201d, \u20ac5'));
});

test('maxDepth bounds how far links are followed; maxPages bounds how many pages are fetched', async (t) => {
  const chain = Object.fromEntries([0, 1, 2, 3, 4].map((n) => [`/d${n}`, html(article(`depth ${n}`, { links: [`/d${n + 1}`] }))]));
  const wide = Object.fromEntries(Array.from({ length: 10 }, (_, n) => [`/w${n}`, html(article(`wide ${n}`))]));
  const server = await startLoopbackServer(routes({ ...chain, ...wide, '/wide': html(article('wide', { links: Object.keys(wide) })) }));
  t.teardown(() => server.close());
  t.deepEqual((await crawlOnce(server, ['/d0'], { maxDepth: 2 })).paths, ['/d0', '/d1', '/d2']);
  const before = server.requests.length;
  const { summary } = await crawlOnce(server, ['/wide'], { maxPages: 4 });
  t.is(summary.fetched, 4);
  t.is(server.requests.slice(before).filter((request) => request.path !== '/robots.txt').length, 4);
});

test('failed pages are counted and the crawl goes on: 404, a slow page, a huge page', async (t) => {
  const server = await startLoopbackServer(
    routes({
      '/': html(article('start', { links: ['/missing', '/slow', '/huge', '/fine'] })),
      '/slow': (response) => response.setHeader('content-type', 'text/html').write('<p>never finishes'),
      '/huge': (response) => response.setHeader('content-type', 'text/html').end(Buffer.alloc(3 * 1024 * 1024, 'x')),
      '/fine': html(article('fine')),
    }),
  );
  t.teardown(() => server.close());
  const { paths, summary } = await crawlOnce(server, ['/'], { fetchPolicy: { ...LOOPBACK_ALLOWED, timeoutMs: 500, maxBytes: 1024 * 1024 } });
  t.deepEqual(paths, ['/', '/fine']);
  t.is(summary.errors, 3);
});

test('an interrupted crawl resumes: pages already stored are not fetched again, the rest are', async (t) => {
  const pages = Array.from({ length: 12 }, (_, n) => `/page-${n}`);
  const server = await startLoopbackServer(
    routes({ '/': html(article('index', { links: pages })), ...Object.fromEntries(pages.map((path) => [path, html(article(path))])) }),
  );
  t.teardown(() => server.close());
  const statePath = join(mkdtempSync(join(tmpdir(), 'searchgate-crawl-')), 'crawl-state.jsonl');
  const seeds = [{ url: `${server.origin}/`, kind: 'page' as const }];

  const interrupt = new AbortController();
  const firstRun: IndexedPage[] = [];
  const first = await crawl({ seeds, fetchPolicy: LOOPBACK_ALLOWED, minDelayMs: 0, perHostConcurrency: 2, statePath, signal: interrupt.signal }, async (page) => {
    firstRun.push(page);
    if (firstRun.length === 5) interrupt.abort();
  });
  t.false(first.complete);
  t.true(existsSync(statePath));
  t.true(readFileSync(statePath, 'utf8').length > 0);
  const requestsBefore = server.requests.length;

  const secondRun: IndexedPage[] = [];
  const second = await crawl({ seeds, fetchPolicy: LOOPBACK_ALLOWED, minDelayMs: 0, statePath }, async (page) => {
    secondRun.push(page);
  });
  t.true(second.complete);
  t.true(second.resumed);
  const refetched = server.requests.slice(requestsBefore).map((request) => `${server.origin}${request.path}`);
  for (const page of firstRun) t.false(refetched.includes(page.url), `${page.url} was fetched again`);
  const allStored = [...firstRun, ...secondRun].map((page) => page.url).sort();
  t.deepEqual(allStored, [`${server.origin}/`, ...pages.map((path) => `${server.origin}${path}`)].sort());
  t.false(existsSync(statePath), 'a finished crawl leaves no state behind');
});
