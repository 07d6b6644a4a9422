import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import type { IndexedPage } from '../../src/local/types.js';
import { runCli as searchgate } from '../helpers/cli.js';
import { article, html, routes, startLoopbackServer } from '../local/fetch/loopback-server.js';

function temporaryDirectory(): string {
  return mkdtempSync(join(tmpdir(), 'searchgate-index-cli-'));
}

function parseJsonLines(text: string): IndexedPage[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as IndexedPage);
}

test('index add <jsonl>, then stats --json, export and remove', async (t) => {
  const directory = temporaryDirectory();
  const jsonl = join(directory, 'pages.jsonl');
  writeFileSync(
    jsonl,
    [
      JSON.stringify({ url: 'https://www.example.org/one', title: 'One', text: 'The first page is about lighthouses.', datePublished: '2024-01-02' }),
      '{this line is broken',
      JSON.stringify({ url: 'https://docs.example.net/two', title: 'Two', text: 'The second page is about harbours.' }),
      // The same text under another URL: stored once.
      JSON.stringify({ url: 'https://mirror.example.net/two', title: 'Two (mirror)', text: 'The second page is about   HARBOURS.' }),
    ].join('\n'),
  );
  const index = join(directory, 'index');

  const added = await searchgate(['index', 'add', jsonl, '--dir', index]);
  t.is(added.code, 0, added.stderr);
  t.regex(added.stderr, /line 2: not valid JSON/);
  t.regex(added.stderr, /2 pages read, 1 duplicates, 0 skipped, 1 bad lines/);

  const stats = await searchgate(['index', 'stats', '--json'], { env: { SEARCHGATE_INDEX_DIR: index } });
  t.is(stats.code, 0, stats.stderr);
  t.like(JSON.parse(stats.stdout), { documents: 2, domains: 2, directory: index });
  t.true(JSON.parse(stats.stdout).bytesOnDisk > 0);
  t.regex((await searchgate(['index', 'stats', '--dir', index])).stdout, /documents:\s+2/);

  const exported = await searchgate(['index', 'export', '--dir', index]);
  t.is(exported.code, 0, exported.stderr);
  const pages = parseJsonLines(exported.stdout).sort((a, b) => a.url.localeCompare(b.url));
  t.deepEqual(
    pages.map((page) => [page.url, page.title, page.domain]),
    [
      ['https://docs.example.net/two', 'Two', 'docs.example.net'],
      ['https://www.example.org/one', 'One', 'example.org'],
    ],
  );
  t.is(pages[1]!.datePublished, '2024-01-02T00:00:00.000Z');

  const out = join(directory, 'export.jsonl');
  t.is((await searchgate(['index', 'export', '--dir', index, '--out', out])).code, 0);
  t.is(parseJsonLines(readFileSync(out, 'utf8')).length, 2);

  const removed = await searchgate(['index', 'remove', 'https://WWW.example.org/one#top', '--dir', index]);
  t.is(removed.code, 0, removed.stderr);
  t.regex(removed.stdout, /removed 1 page\b/);
  t.like(JSON.parse((await searchgate(['index', 'stats', '--json', '--dir', index])).stdout), { documents: 1 });
});

test('index add keeps the markdown of pages it extracts from HTML, unless --no-markdown; export and add carry it across', async (t) => {
  const directory = temporaryDirectory();
  const jsonl = join(directory, 'html.jsonl');
  const page = article('lighthouses', {
    body: '<h2>Keepers</h2><p>Keepers once lived in every lighthouse and trimmed the lamp each night, a lonely trade on a rocky coast.</p><ul><li>Lamp oil</li><li>Logbooks</li></ul><p>Automation retired the last of them, and the towers now run on their own with a visit from time to time.</p>',
  });
  writeFileSync(jsonl, JSON.stringify({ url: 'https://lights.example/keepers', html: page }));

  const withMarkdown = join(directory, 'with');
  t.is((await searchgate(['index', 'add', jsonl, '--dir', withMarkdown, '--no-vectors'])).code, 0);
  const [stored] = parseJsonLines((await searchgate(['index', 'export', '--dir', withMarkdown])).stdout);
  t.regex(stored!.markdown ?? '', /^## Keepers$/m);
  t.regex(stored!.markdown ?? '', /^- +Lamp oil$/m);

  const without = join(directory, 'without');
  const plain = await searchgate(['index', 'add', jsonl, '--dir', without, '--no-vectors', '--no-markdown']);
  t.is(plain.code, 0, plain.stderr);
  const [textOnly] = parseJsonLines((await searchgate(['index', 'export', '--dir', without])).stdout);
  t.is(textOnly!.text, stored!.text);
  t.false('markdown' in textOnly!);

  // An export read back by index add keeps the markdown as it was stored.
  const exported = join(directory, 'export.jsonl');
  t.is((await searchgate(['index', 'export', '--dir', withMarkdown, '--out', exported])).code, 0);
  const copy = join(directory, 'copy');
  t.is((await searchgate(['index', 'add', exported, '--dir', copy, '--no-vectors'])).code, 0);
  t.deepEqual(parseJsonLines((await searchgate(['index', 'export', '--dir', copy])).stdout), [stored]);
});

test('index add folds only past --max-unindexed, or with --fold; index fold folds what is left', async (t) => {
  const directory = temporaryDirectory();
  const index = join(directory, 'index');
  const file = (name: string, words: string[]) => {
    const path = join(directory, `${name}.jsonl`);
    writeFileSync(path, words.map((word) => JSON.stringify({ url: `https://fold.example/${word}`, title: word, text: `A page about the ${word}.` })).join('\n'));
    return path;
  };
  const add = async (path: string, ...options: string[]) => {
    const run = await searchgate(['index', 'add', path, '--dir', index, '--no-vectors', ...options]);
    t.is(run.code, 0, run.stderr);
    return run.stderr;
  };
  // Each commit's fragment counts as 10 rows: 2 + 10 are within 15, 3 + 2 × 10 are not.
  t.regex(await add(file('two', ['heron', 'egret']), '--max-unindexed', '15'), /2 pages written .* 0 folds/);
  t.regex(await add(file('one', ['ibis']), '--max-unindexed', '15'), /1 pages written .* 1 fold;/, 'two commits\' pages are past the limit');
  t.regex(await add(file('another', ['stork'])), /1 pages written .* 0 folds/);
  t.regex(await add(file('forced', ['crane']), '--fold'), /1 pages written .* 1 fold;/);
  t.regex(await add(file('last', ['plover'])), /0 folds/);
  const folded = await searchgate(['index', 'fold', '--dir', index]);
  t.is(folded.code, 0, folded.stderr);
  t.regex(folded.stdout, /folded 1 unindexed page in/);
  t.regex((await searchgate(['index', 'stats', '--dir', index])).stdout, /documents:\s+6/);
});

test('index add with bad arguments is a usage error', async (t) => {
  const directory = temporaryDirectory();
  for (const args of [['add'], ['add', join(directory, 'missing.jsonl')], ['add', 'notes.txt'], ['add', 'https://example.org/', '--max-pages', 'many'], ['add', 'https://example.org/', '--max-unindexed', '-1'], ['frobnicate']]) {
    const run = await searchgate(['index', ...args, '--dir', join(directory, 'index')]);
    t.is(run.code, 2, args.join(' '));
    t.regex(run.stderr, /usage: searchgate index/);
  }
});

test('index add <url> crawls; without --allow-private a loopback site is refused', async (t) => {
  const server = await startLoopbackServer(routes({ '/': html(article('home', { links: ['/a'] })), '/a': html(article('alpha')) }));
  t.teardown(() => server.close());
  const index = join(temporaryDirectory(), 'index');

  const refused = await searchgate(['index', 'add', `${server.origin}/`, '--dir', index, '--delay-ms', '0']);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /refused|private, loopback/);
  t.deepEqual(server.requests, []);

  const crawled = await searchgate(['index', 'add', `${server.origin}/`, '--dir', index, '--delay-ms', '0', '--allow-private']);
  t.is(crawled.code, 0, crawled.stderr);
  t.regex(crawled.stderr, /stored http:\/\/127\.0\.0\.1:\d+\/a/);
  const pages = parseJsonLines((await searchgate(['index', 'export', '--dir', index])).stdout);
  t.deepEqual(pages.map((page) => page.title).sort(), ['alpha', 'home']);
});

test('an interrupted index add continues where it stopped when run again', async (t) => {
  const paths = Array.from({ length: 8 }, (_, n) => `/page-${n}`);
  const server = await startLoopbackServer(
    routes({ '/': html(article('start', { links: paths })), ...Object.fromEntries(paths.map((path) => [path, html(article(`topic ${path}`))])) }),
  );
  t.teardown(() => server.close());
  const index = join(temporaryDirectory(), 'index');
  const args = ['index', 'add', `${server.origin}/`, '--dir', index, '--delay-ms', '150', '--concurrency', '1', '--allow-private'];

  let interrupted = false;
  const first = await searchgate(args, {
    onStderr: (soFar, child) => {
      if (!interrupted && (soFar.match(/^stored /gm) ?? []).length >= 3) {
        interrupted = true;
        child.kill('SIGINT');
      }
    },
  });
  t.is(first.code, 130, first.stderr);
  const storedFirst = [...first.stderr.matchAll(/^stored (\S+)/gm)].map((match) => match[1]!);
  t.true(storedFirst.length >= 3 && storedFirst.length < 9);
  const requestsBefore = server.requests.length;

  const second = await searchgate(args);
  t.is(second.code, 0, second.stderr);
  t.regex(second.stderr, /resuming an interrupted crawl/);
  const fetchedAgain = server.requests.slice(requestsBefore).map((request) => `${server.origin}${request.path}`);
  for (const url of storedFirst) t.false(fetchedAgain.includes(url), `${url} fetched again`);

  const pages = parseJsonLines((await searchgate(['index', 'export', '--dir', index])).stdout);
  t.is(pages.length, 9);
});
