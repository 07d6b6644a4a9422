/**
 * A small commit into a large, folded index (issue 20 item 4, issue 24): the writer leaves its rows
 * unindexed instead of folding, which would rewrite the whole table, and searches find them by a
 * flat scan at once: full text, vectors (past the size where the vectors have an IVF-PQ index of
 * their own), filters, and a known item's exact title.
 */
import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import test from 'ava';
import { DEFAULT_HYBRID_WEIGHTS, hybridSearch } from '../../../src/local/index/hybrid.js';
import { openLocalIndex } from '../../../src/local/index/index.js';
import { IndexWriter } from '../../../src/local/index/writer.js';
import { bagOfWordsEmbedder, filler, page, query, temporaryDirectory } from './helpers.js';

/** Enough vectors for the index to build its IVF-PQ index (VECTOR_INDEX_MIN_ROWS). */
const FOLDED_PAGES = 10_000;
const WORDS = ['river', 'stone', 'market', 'window', 'garden', 'letter', 'silver', 'harbor', 'engine', 'meadow', 'lantern', 'copper'];

/** The files that hold rows and index data: a fold rewrites them, an append only adds to them. */
async function dataAndIndexFiles(directory: string): Promise<Set<string>> {
  const table = join(directory, 'pages.lance');
  const files = new Set<string>();
  for (const folder of ['data', '_indices']) {
    for (const entry of await readdir(join(table, folder), { withFileTypes: true, recursive: true })) {
      if (entry.isFile()) files.add(relative(table, join(entry.parentPath, entry.name)));
    }
  }
  return files;
}

test('a small commit into a folded index rewrites no file, and its pages are found at once by every kind of search', async (t) => {
  t.timeout(180_000);
  const directory = await temporaryDirectory(t);
  const index = await openLocalIndex(directory, { maxUnindexedRows: 1000 });
  t.teardown(() => index.close());
  const embedder = bagOfWordsEmbedder();
  const bulk = await IndexWriter.open(index, { embedder, keepVersionsMs: 0 });
  for (let i = 0; i < FOLDED_PAGES; i++) {
    const word = (k: number) => WORDS[(i * k + k) % WORDS.length]!;
    await bulk.ready();
    void bulk.add(page(`https://filler.example/${i}`, { title: `${word(1)} ${word(5)} ${word(7)}`, text: `${word(3)} ${word(11)} ${filler(20)} note ${i}` }));
  }
  t.like(await bulk.close(), { written: FOLDED_PAGES, folds: 1 });
  t.is(await index.unindexedRows(), 0);
  const before = await dataAndIndexFiles(directory);

  const newcomer = page('https://news.example/quokka', {
    title: 'Silver lantern harbor quokka',
    text: 'The quokka is a small marsupial of Rottnest Island that smiles for every camera.',
    datePublished: '2024-03-10T08:00:00.000Z',
  });
  const changed = page('https://filler.example/42', { title: 'Copper meadow', text: 'An axolotl regrows its limbs in the lake.' });
  const small = await IndexWriter.open(index, { embedder, keepVersionsMs: 0 });
  await Promise.all([small.add(newcomer), small.add(changed)]);
  t.like(await small.close(), { written: 2, folds: 0 });

  const after = await dataAndIndexFiles(directory);
  t.deepEqual([...before].filter((file) => !after.has(file)), [], 'every data and index file is still there, unchanged');
  t.true([...after].filter((file) => !before.has(file)).every((file) => file.startsWith('data/')), 'only data files were added');
  t.is(await index.unindexedRows(), 2);
  t.is((await index.stats()).documents, FOLDED_PAGES + 1, 'the changed page\'s old row is gone');

  const urls = (hits: Array<{ page: { url: string } }>) => hits.map((hit) => hit.page.url);
  t.deepEqual(urls((await index.search(query('quokka'))).hits), [newcomer.url]);
  t.deepEqual(urls((await index.search(query('axolotl'))).hits), [changed.url]);
  t.false(urls((await index.search(query('note 42', { match: 'all' }))).hits).includes(changed.url), 'the old text is not found');
  // A known item: its exact title, made of words thousands of folded pages share, finds it first.
  t.is((await index.search(query(newcomer.title))).hits[0]?.page.url, newcomer.url);
  const hybrid = await hybridSearch(index, query(newcomer.title), { weights: DEFAULT_HYBRID_WEIGHTS, candidates: 50, embedder });
  t.is(hybrid.hits[0]?.page.url, newcomer.url);

  const nearest = await index.vectorSearch({ ...query('quokka marsupial island camera'), vector: await embedder.embedQuery('quokka marsupial island camera'), models: embedder.reads });
  t.is(nearest[0]?.page.url, newcomer.url);

  t.deepEqual(urls((await index.search(query('quokka', { includeDomains: ['news.example'] }))).hits), [newcomer.url]);
  t.deepEqual((await index.search(query('quokka', { excludeDomains: ['news.example'] }))).hits, []);
  const march = { fromMs: Date.UTC(2024, 2, 1), toMs: Date.UTC(2024, 3, 1) };
  t.deepEqual(urls((await index.search(query('quokka', { window: march }))).hits), [newcomer.url]);
  t.deepEqual(urls((await index.search(query('quokka', { window: { fromMs: Date.UTC(2024, 2, 11), toMs: march.toMs } }))).hits), []);
  const filteredNearest = await index.vectorSearch({ ...query('quokka', { window: march }), vector: await embedder.embedQuery('quokka marsupial'), models: embedder.reads });
  t.deepEqual(urls(filteredNearest), [newcomer.url]);
});

test('a commit that leaves more unindexed rows than searches scan ends with a fold, and its pages are found', async (t) => {
  const directory = await temporaryDirectory(t);
  // Each commit's fragment counts as 10 rows: 4 + 10 are within 15, 6 + 2 × 10 are not.
  const index = await openLocalIndex(directory, { maxUnindexedRows: 15 });
  t.teardown(() => index.close());
  const pages = (from: number, count: number) => Array.from({ length: count }, (_, i) => page(`https://many.example/${from + i}`, { text: `wombat page ${from + i}` }));

  const first = await IndexWriter.open(index);
  await Promise.all(pages(0, 4).map((entry) => first.add(entry)));
  t.like(await first.close(), { folds: 0 });
  t.is(await index.unindexedRows(), 4);

  // These two, in a commit of their own, pass the limit with the four the first run left unindexed.
  const second = await IndexWriter.open(index);
  await Promise.all(pages(4, 2).map((entry) => second.add(entry)));
  t.like(await second.close(), { folds: 1 });
  t.is(await index.unindexedRows(), 0);
  t.is((await index.search(query('wombat', { limit: 20 }))).hits.length, 6);
});

test('one-page commits fold once their fragments cost searches more than the limit', async (t) => {
  const directory = await temporaryDirectory(t);
  // Each one-page commit costs 1 row and 10 for its fragment: three are within 35, the fourth is not.
  const index = await openLocalIndex(directory, { maxUnindexedRows: 35 });
  t.teardown(() => index.close());
  const folds: number[] = [];
  for (const word of ['kiwi', 'kea', 'weka', 'takahe']) {
    const writer = await IndexWriter.open(index);
    await writer.add(page(`https://birds.example/${word}`, { text: `The ${word} lives in New Zealand.` }));
    folds.push((await writer.close()).folds);
  }
  t.deepEqual(folds, [0, 0, 0, 1]);
  t.is(await index.unindexedRows(), 0);
  t.is((await index.search(query('zealand'))).hits.length, 4);
});

test('a trickle within the limit is searchable as soon as it is appended, and a changed page loses its old text within foldEveryMs, without a fold', async (t) => {
  const directory = await temporaryDirectory(t);
  const index = await openLocalIndex(directory);
  t.teardown(() => index.close());
  await index.upsert([page('https://zoo.example/emu', { text: 'The emu runs across the plain.' })]);

  const trickle = await IndexWriter.open(index, { batchPages: 100, batchDelayMs: 10, foldEveryMs: 300 });
  await trickle.add(page('https://zoo.example/emu', { text: 'The emu swims across the creek.' }));
  t.deepEqual((await index.search(query('creek'))).hits.map((hit) => hit.page.url), ['https://zoo.example/emu']);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  t.deepEqual((await index.search(query('plain'))).hits, [], 'the old row was deleted');
  t.is(trickle.counters.folds, 0);
  await trickle.close();
});
