/**
 * The local index in shards (shards.ts): tiny shards, so that a handful of pages spans several, and
 * every operation is checked against what one table answers.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import test from 'ava';
import { hybridSearch, type HybridWeights } from '../../../src/local/index/hybrid.js';
import { openLocalIndex, shardRowsSetting, type LocalIndexOptions } from '../../../src/local/index/index.js';
import { manifestVersion } from '../../../src/local/index/mirror.js';
import { shardNames } from '../../../src/local/index/shards.js';
import { IndexWriter } from '../../../src/local/index/writer.js';
import type { IndexedPage, LocalIndex } from '../../../src/local/types.js';
import { bagOfWordsEmbedder, page, query, temporaryDirectory } from './helpers.js';

const BY_COSINE: HybridWeights = { intercept: 0, cosine: 10, lexical: 0, titleCoverage: 0, exactTitle: 0, bm25Rank: 0, vectorRank: 0, fullTextScore: 0, titleCosine: 0 };

/** Eight pages that all match "harbor", each with a word of its own; the harbor count sets their BM25 order. */
const PAGES = ['anchor', 'beacon', 'cargo', 'dock', 'ferry', 'gull', 'hull', 'island'].map((word, i) =>
  page(`https://port${i % 3}.example/${word}`, { title: `The ${word}`, text: `${'harbor '.repeat(i + 1)}${word} tide rope`.trim() }),
);

async function writeAll(index: LocalIndex, pages: IndexedPage[], options: { embedder?: ReturnType<typeof bagOfWordsEmbedder> } = {}) {
  // Batches of two: the writer appends, and the shards roll over, between them.
  const writer = await IndexWriter.open(index, { batchPages: 2, ...options });
  for (const entry of pages) await writer.add(entry);
  return writer.close();
}

async function tableNames(directory: string): Promise<string[]> {
  const connection = await lancedb.connect(directory);
  try {
    return shardNames(await connection.tableNames());
  } finally {
    connection.close();
  }
}

/** The newest version of a shard's table, from its manifests on disk (a connection may serve a cached one). */
async function tableVersion(directory: string, name: string): Promise<number> {
  const versions = (await readdir(join(directory, `${name}.lance`, '_versions'))).map(manifestVersion).filter((version) => version !== null);
  return Math.max(...versions);
}

async function openIndex(t: Parameters<typeof temporaryDirectory>[0], directory: string, options: LocalIndexOptions = {}) {
  const index = await openLocalIndex(directory, { shardRows: 3, ...options });
  t.teardown(() => index.close());
  return index;
}

test('pages past the shard size go to new tables, and searches, lookups, stats and export read them all as one index', async (t) => {
  const directory = await temporaryDirectory(t);
  const sharded = await openIndex(t, directory);
  const counters = await writeAll(sharded, PAGES);
  t.like(counters, { written: 8 });
  t.deepEqual(await tableNames(directory), ['pages', 'pages-2', 'pages-3']);

  // The same pages in one table give the reference answers.
  const single = await openIndex(t, await temporaryDirectory(t), { shardRows: 1_000 });
  await writeAll(single, PAGES);
  const urls = (hits: { page: IndexedPage }[]) => hits.map((hit) => hit.page.url);

  const all = await sharded.search(query('harbor', { limit: 20 }));
  t.is(all.hits.length, 8);
  t.is(all.total, 8);
  t.deepEqual(urls(all.hits), urls((await single.search(query('harbor', { limit: 20 }))).hits));
  t.true(all.hits.every((hit, i) => i === 0 || all.hits[i - 1]!.score >= hit.score), 'best first across shards');
  // A page of results is a slice of the whole ranking, wherever its pages live.
  const second = await sharded.search(query('harbor', { limit: 3, offset: 3 }));
  t.deepEqual(urls(second.hits), urls(all.hits).slice(3, 6));
  t.is(second.total, 8, 'no shard had as many matches as asked of it (offset + limit), so each counted exactly');
  t.is((await sharded.search(query('harbor', { limit: 2 }))).total, null, 'shards with a full page of matches do not count them');
  // A word of one page finds that page alone, in whichever shard.
  for (const entry of PAGES) t.deepEqual(urls((await sharded.search(query(entry.title.split(' ')[1]!))).hits), [entry.url]);
  // Filters hold in every shard.
  t.deepEqual(urls((await sharded.search(query('harbor', { limit: 20, includeDomains: ['port1.example'] }))).hits).sort(), PAGES.filter((entry) => entry.domain === 'port1.example').map((entry) => entry.url).sort());

  t.is((await sharded.get(PAGES[0]!.url))?.text, PAGES[0]!.text);
  t.is((await sharded.get(PAGES[7]!.url))?.text, PAGES[7]!.text);
  t.deepEqual((await sharded.stored(PAGES.map((entry) => entry.url))).map((state) => state.url).sort(), PAGES.map((entry) => entry.url).sort());
  const stats = await sharded.stats();
  t.like(stats, { documents: 8, domains: 3, shards: 3 });
  t.true(stats.bytesOnDisk > 0);
  const exported: string[] = [];
  for await (const entry of sharded.export()) exported.push(entry.url);
  t.deepEqual(exported.sort(), PAGES.map((entry) => entry.url).sort());
});

test('a full shard is folded once, when the next one starts; later folds rewrite only the newest', async (t) => {
  const directory = await temporaryDirectory(t);
  const index = await openIndex(t, directory);
  await writeAll(index, PAGES.slice(0, 6));
  t.deepEqual(await tableNames(directory), ['pages', 'pages-2']);
  const full = await tableVersion(directory, 'pages-2');
  // The next page starts a shard: the full one is folded first, so its rows never wait unindexed.
  await writeAll(index, PAGES.slice(6, 7));
  t.deepEqual(await tableNames(directory), ['pages', 'pages-2', 'pages-3']);
  const [first, second, third] = [await tableVersion(directory, 'pages'), await tableVersion(directory, 'pages-2'), await tableVersion(directory, 'pages-3')];
  t.true(second > full);
  await writeAll(index, PAGES.slice(7));
  await index.fold({ keepVersionsMs: 0 });
  t.is(await tableVersion(directory, 'pages'), first);
  t.is(await tableVersion(directory, 'pages-2'), second);
  t.true((await tableVersion(directory, 'pages-3')) > third);
  t.is(await index.unindexedRows(), 0);
  t.is((await index.search(query('harbor', { limit: 20 }))).hits.length, 8);
});

test('a page written again lands in the newest shard and leaves the old one: found once, by its new text', async (t) => {
  const directory = await temporaryDirectory(t);
  const index = await openIndex(t, directory);
  await writeAll(index, PAGES);
  const moved = { ...PAGES[1]!, title: 'The lamp', text: 'harbor lighthouse keeper', contentHash: 'changed' };
  const counters = await writeAll(index, [moved]);
  t.like(counters, { written: 1 });
  t.deepEqual((await index.search(query('lighthouse'))).hits.map((hit) => hit.page.url), [moved.url]);
  t.deepEqual((await index.search(query('beacon'))).hits, [], 'the old row is gone from its shard');
  t.is((await index.get(moved.url))?.text, moved.text);
  t.is((await index.stats()).documents, 8);
  t.is((await index.search(query('harbor', { limit: 20 }))).hits.filter((hit) => hit.page.url === moved.url).length, 1);

  // The same input again is skipped whole: what each shard holds is known by URL and content hash.
  t.like(await writeAll(index, [...PAGES.filter((entry) => entry.url !== moved.url), moved]), { written: 0, unchanged: 8 });
  t.is((await index.remove([PAGES[0]!.url, PAGES[7]!.url])), 2);
  t.is((await index.stats()).documents, 6);
});

test('vector search and hybrid ranking span the shards', async (t) => {
  const directory = await temporaryDirectory(t);
  const index = await openIndex(t, directory);
  const embedder = bagOfWordsEmbedder();
  await writeAll(index, PAGES, { embedder });
  t.is((await tableNames(directory)).length, 3);
  const vector = await embedder.embedQuery('island tide');
  const hits = await index.vectorSearch({ ...query('island tide', { limit: 3 }), vector, models: [embedder.model] });
  t.is(hits[0]!.page.url, PAGES[7]!.url);
  t.is(hits.length, 3);
  t.true(hits.every((hit, i) => i === 0 || hits[i - 1]!.score >= hit.score));
  const ranked = await hybridSearch(index, query('anchor tide', { limit: 3 }), { weights: BY_COSINE, candidates: 10, embedder });
  t.is(ranked.hits[0]!.page.url, PAGES[0]!.url);
});

test('a reader open before a writer starts new shards finds their pages', async (t) => {
  const directory = await temporaryDirectory(t);
  const writer = await openIndex(t, directory);
  await writeAll(writer, PAGES.slice(0, 2));
  const reader = await openIndex(t, directory, { readConsistencyMs: 0 });
  await writeAll(writer, PAGES.slice(2));
  t.is((await tableNames(directory)).length, 3);
  t.deepEqual((await reader.search(query('island'))).hits.map((hit) => hit.page.url), [PAGES[7]!.url]);
  t.is((await reader.stats()).documents, 8);
});

test('SEARCHGATE_SHARD_PAGES sets the shard size; anything but a whole number ≥ 1 is refused', (t) => {
  t.is(shardRowsSetting({}), 250_000);
  t.is(shardRowsSetting({ SEARCHGATE_SHARD_PAGES: '50000' }), 50_000);
  for (const given of ['0', '-3', '2.5', 'many']) t.throws(() => shardRowsSetting({ SEARCHGATE_SHARD_PAGES: given }), { message: /SEARCHGATE_SHARD_PAGES must be a whole number ≥ 1/ });
});

test('shard tables are told apart from other tables and ordered by number', (t) => {
  t.deepEqual(shardNames(['pages-10', 'other', 'pages-2', 'pages', 'pages-x', 'pages-0']), ['pages', 'pages-2', 'pages-10']);
});
