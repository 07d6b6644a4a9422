import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createAjv, responseValidators } from '../../../src/api/validate.js';
import { openLocalIndex } from '../../../src/local/index/index.js';
import { contentHash } from '../../../src/local/ingest/indexed-page.js';
import type { IndexedPage } from '../../../src/local/types.js';
import { startGateway } from '../../helpers/gateway.js';

const validators = responseValidators(createAjv());

function page(url: string, title: string, text: string, datePublished: string | null): IndexedPage {
  const host = new URL(url).hostname.replace(/^www\./, '');
  return { url, canonicalUrl: url, title, text, datePublished, domain: host, language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(text) };
}

const PAGES = [
  page('https://docs.postgres.example/vacuum', 'Routine vacuuming', 'PostgreSQL databases require periodic maintenance known as vacuuming. ' + 'Autovacuum settings matter. '.repeat(40), '2024-05-05T10:00:00.000Z'),
  page('https://blog.postgres.example/tuning', 'Tuning autovacuum', 'How to tune autovacuum thresholds for large tables, and why vacuuming falls behind.', '2024-05-06T00:00:00.000Z'),
  page('https://www.other.example/vacuum-cleaners', 'Best vacuum cleaners', 'Our review of vacuum cleaners for the home.', '2023-01-01T00:00:00.000Z'),
  page('https://undated.example/notes', 'Vacuum notes', 'Undated notes on vacuuming.', null),
];

async function setup(t: any, pages: IndexedPage[] = PAGES, options: Record<string, unknown> = {}) {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-local-'));
  const index = await openLocalIndex(directory);
  await index.upsert(pages);
  await index.close();
  const gateway = await startGateway({ providers: { local: { type: 'local', directory, ...options } }, search: { chain: ['local'] }, cache: { enabled: false } });
  t.teardown(() => gateway.close());
  return gateway;
}

const search = async (gateway: Awaited<ReturnType<typeof setup>>, body: Record<string, unknown>) => {
  const response = await gateway.post('/v1/web-search', body);
  const json = (await response.json()) as any;
  // Thrown rather than asserted so that every caller gets a parsed 200 body or a clear failure.
  if (response.status !== 200) throw new Error(`expected 200, got ${response.status}: ${JSON.stringify(json)}`);
  return json;
};

test('the local index answers web-search end to end, with query-biased snippets', async (t) => {
  const gateway = await setup(t);
  const body = await search(gateway, { query: 'vacuuming', count: 10 });
  t.true(validators.webSearch(body), JSON.stringify(validators.webSearch.errors));
  const urls = body.data.webPages.value.map((r: any) => r.url);
  t.true(urls.includes('https://docs.postgres.example/vacuum'));
  for (const result of body.data.webPages.value) {
    t.regex(result.snippet.toLowerCase(), /vacuum/);
    t.false('text' in result);
  }
  const first = body.data.webPages.value.find((r: any) => r.url === 'https://docs.postgres.example/vacuum');
  t.is(first.name, 'Routine vacuuming');
  t.is(first.datePublished, '2024-05-05T10:00:00.000Z');
  t.is(first.dateLastCrawled, '2026-11-01T00:00:00.000Z');
});

test('the index looks for the query\'s first maxQueryCharacters characters, whole words, and no further', async (t) => {
  const gateway = await setup(t, PAGES, { maxQueryCharacters: 20 });
  // "cleaners" is within the first 20 characters; "autovacuum", which other pages hold, is past them.
  const query = `cleaners review home ${'filler '.repeat(10_000)}autovacuum`;
  const body = await search(gateway, { query, count: 10 });
  t.deepEqual(
    body.data.webPages.value.map((r: any) => r.url),
    ['https://www.other.example/vacuum-cleaners'],
  );
});

test('text mode returns the stored main text, cut at max_characters', async (t) => {
  const gateway = await setup(t);
  const body = await search(gateway, { query: 'routine vacuuming', count: 1, includeDomains: ['docs.postgres.example'], contents: { text: { max_characters: 80 } } });
  const [result] = body.data.webPages.value;
  t.is(result.text, PAGES[0]!.text.slice(0, 80));
  t.false('snippet' in result);
});

test('domain filters and freshness run inside the index', async (t) => {
  const gateway = await setup(t);
  const urls = async (extra: Record<string, unknown>) =>
    (await search(gateway, { query: 'vacuum vacuuming autovacuum', count: 10, ...extra })).data.webPages.value.map((r: any) => r.url).sort();
  t.deepEqual(await urls({ includeDomains: ['postgres.example'] }), ['https://blog.postgres.example/tuning', 'https://docs.postgres.example/vacuum']);
  t.deepEqual(await urls({ includeDomains: ['postgres.example'], excludeDomains: ['blog.postgres.example'] }), ['https://docs.postgres.example/vacuum']);
  t.deepEqual(await urls({ includeDomains: ['other.example'] }), ['https://www.other.example/vacuum-cleaners'], 'www. is not part of the domain');
  t.deepEqual(await urls({ freshness: '2024-05-05' }), ['https://docs.postgres.example/vacuum']);
  t.deepEqual(await urls({ freshness: '2024-05-05..2024-05-06' }), ['https://blog.postgres.example/tuning', 'https://docs.postgres.example/vacuum']);
  t.deepEqual(await urls({ freshness: '2022-01-01..2022-12-31' }), []);
});

test('an empty index answers 200 with zero results', async (t) => {
  const gateway = await setup(t, []);
  const body = await search(gateway, { query: 'anything at all' });
  t.deepEqual(body.data.webPages.value, []);
});

test('an index kept in shards answers over HTTP as one: results of every shard, one ranking, filters and text', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-local-'));
  // One page per shard: each of the four pages lives in a table of its own.
  const writer = await openLocalIndex(directory, { shardRows: 1 });
  for (const entry of PAGES) await writer.upsert([entry]);
  t.like(await writer.stats(), { documents: 4, shards: 4 });
  await writer.close();
  const single = mkdtempSync(join(tmpdir(), 'searchgate-local-'));
  const reference = await openLocalIndex(single);
  await reference.upsert(PAGES);
  await reference.close();
  const serve = async (at: string) => {
    const gateway = await startGateway({ providers: { local: { type: 'local', directory: at } }, search: { chain: ['local'] }, cache: { enabled: false } });
    t.teardown(() => gateway.close());
    return gateway;
  };
  const [sharded, whole] = [await serve(directory), await serve(single)];
  const urls = async (gateway: Awaited<ReturnType<typeof serve>>, body: Record<string, unknown>) =>
    (await search(gateway, body)).data.webPages.value.map((result: any) => result.url);

  const all = await urls(sharded, { query: 'vacuum vacuuming', count: 10 });
  t.is(all.length, 4);
  t.deepEqual([...all].sort(), PAGES.map((entry) => entry.url).sort());
  // Each shard weighs terms by its own statistics (one page each here), so only rankings that do not
  // hang on them are compared with the single table's: a word of one page, and a filter's set.
  for (const query of ['thresholds', 'cleaners review', 'undated notes']) t.deepEqual(await urls(sharded, { query, count: 10 }), await urls(whole, { query, count: 10 }));
  t.deepEqual(await urls(sharded, { query: 'thresholds', count: 10 }), ['https://blog.postgres.example/tuning']);
  const domain = { query: 'vacuum', count: 10, includeDomains: ['postgres.example'] };
  t.deepEqual((await urls(sharded, domain)).sort(), (await urls(whole, domain)).sort());
  t.is((await urls(sharded, domain)).length, 2);
  const body = await search(sharded, { query: 'cleaners', count: 1, contents: { text: { max_characters: 30 } } });
  t.is(body.data.webPages.value[0].text, PAGES[2]!.text.slice(0, 30));
});
