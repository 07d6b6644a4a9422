/**
 * The bulk writer and hybrid retrieval on a real on-disk index. The embedder here is a stand-in with
 * the real one's contract (unit vectors per window, a model stamp), whose vectors are bags of hashed
 * word stems, so that which page is nearest is known in advance; the real model is exercised end to
 * end by the CLI and search tests.
 */
import * as lancedb from '@lancedb/lancedb';
import { Schema } from 'apache-arrow';
import test from 'ava';
import { hybridCandidates, hybridSearch, type HybridWeights } from '../../../src/local/index/hybrid.js';
import { openLocalIndex, type LocalIndexOptions } from '../../../src/local/index/index.js';
import { PAGES_TABLE, pageSchema, TITLE_VECTOR_COLUMN, toRow } from '../../../src/local/index/schema.js';
import { IndexWriter } from '../../../src/local/index/writer.js';
import type { IndexedPage } from '../../../src/local/types.js';
import { bagOfWordsEmbedder, BAG_OF_WORDS_DIMENSIONS as DIMENSIONS, page, query, temporaryDirectory } from './helpers.js';

/** Weights that rank by the vectors alone: what the vector leg contributes is then plain to see. */
const BY_COSINE: HybridWeights = { intercept: 0, cosine: 10, lexical: 0, titleCoverage: 0, exactTitle: 0, bm25Rank: 0, vectorRank: 0, fullTextScore: 0, titleCosine: 0 };

async function freshIndex(t: Parameters<typeof temporaryDirectory>[0], options: LocalIndexOptions = {}) {
  const directory = await temporaryDirectory(t);
  const index = await openLocalIndex(directory, options);
  t.teardown(() => index.close());
  return { index, directory };
}

async function writeAll(writer: IndexWriter, pages: IndexedPage[]) {
  await Promise.all(pages.map((entry) => writer.add(entry)));
}

const ANIMALS = [
  page('https://zoo.example/otter', { title: 'Otter', text: 'The otter swims in rivers and eats fish and crabs.' }),
  page('https://zoo.example/falcon', { title: 'Falcon', text: 'The falcon dives from the sky to catch small birds.' }),
  page('https://zoo.example/camel', { title: 'Camel', text: 'The camel crosses the desert and stores fat in its hump.' }),
];

test('appends in batches, folds once at close past maxUnindexedRows, and every page is searchable when close resolves', async (t) => {
  const { index } = await freshIndex(t, { maxUnindexedRows: 2 });
  const writer = await IndexWriter.open(index, { batchPages: 2 });
  await writeAll(writer, ANIMALS);
  // Appended, unfolded, and more than searches scan: not found yet.
  t.deepEqual((await index.search(query('otter'))).hits, []);
  t.is(await index.unindexedRows(), 3);
  const counters = await writer.close();
  t.like(counters, { received: 3, written: 3, unchanged: 0, embedded: 0, folds: 1 });
  t.is(await index.unindexedRows(), 0);
  t.deepEqual((await index.search(query('otter'))).hits.map((hit) => hit.page.url), ['https://zoo.example/otter']);
});

test('a run within maxUnindexedRows ends without a fold, its pages searchable by the scan; foldAtClose folds anyway', async (t) => {
  // Three rows in two commits' fragments (each counted as 10 rows more).
  const { index } = await freshIndex(t, { maxUnindexedRows: 23 });
  const writer = await IndexWriter.open(index, { batchPages: 2 });
  await writeAll(writer, ANIMALS);
  t.like(await writer.close(), { written: 3, folds: 0 });
  t.is(await index.unindexedRows(), 3);
  t.deepEqual((await index.search(query('otter'))).hits.map((hit) => hit.page.url), ['https://zoo.example/otter']);

  const forced = await IndexWriter.open(index, { foldAtClose: true });
  t.like(await forced.close(), { written: 0, folds: 1 });
  t.is(await index.unindexedRows(), 0);
  t.deepEqual((await index.search(query('otter'))).hits.map((hit) => hit.page.url), ['https://zoo.example/otter']);
});

test('foldEveryPages folds during a long run; foldEveryMs makes a trickle searchable without close', async (t) => {
  const { index } = await freshIndex(t, { maxUnindexedRows: 0 });
  const pages = Array.from({ length: 10 }, (_, i) => page(`https://many.example/${i}`, { text: `numbat page ${i}` }));
  const writer = await IndexWriter.open(index, { batchPages: 2, foldEveryPages: 4, foldEveryMs: 60_000 });
  await writeAll(writer, pages);
  t.is(writer.counters.folds, 2, 'after 4 and 8 pages');
  await writer.close();
  t.is(writer.counters.folds, 3);

  // With no unindexed row searched (maxUnindexedRows 0), the trickle's delay ends with a fold.
  const trickle = await IndexWriter.open(index, { batchPages: 100, batchDelayMs: 10, foldEveryMs: 100 });
  await trickle.add(page('https://many.example/late', { text: 'quokka arrives late' }));
  t.deepEqual((await index.search(query('quokka'))).hits, [], 'appended, not yet folded');
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  t.deepEqual((await index.search(query('quokka'))).hits.map((hit) => hit.page.url), ['https://many.example/late']);
  await trickle.close();
});

test('a bulk run held back by a slow embedder writes full batches, and folds by count, not by the trickle delay', async (t) => {
  const { index } = await freshIndex(t, { maxUnindexedRows: 0 });
  const embedder = bagOfWordsEmbedder();
  const batchSizes: number[] = [];
  const slowEmbedder = {
    ...embedder,
    async embedPages(pages: Parameters<typeof embedder.embedPages>[0]) {
      batchSizes.push(pages.length);
      await new Promise((resolve) => setTimeout(resolve, 150));
      return embedder.embedPages(pages);
    },
  };
  const pages = Array.from({ length: 40 }, (_, i) => page(`https://bulk.example/${i}`, { text: `wombat burrow ${i}` }));
  // A page waits 20 ms for its batch, a batch embeds in 150 ms: the input is always ahead.
  const counters = await IndexWriter.writeAll(index, pages, {
    embedder: slowEmbedder,
    batchPages: 4,
    batchDelayMs: 20,
    foldEveryMs: 200,
    foldEveryPages: 1_000,
  });
  t.deepEqual(batchSizes, Array(10).fill(4), 'no batch cut short while two were in flight');
  t.like(counters, { written: 40, folds: 1 });
  t.is((await index.search({ ...query('wombat'), limit: 100 })).hits.length, 40);
});

test('a second run skips what is already in and writes what changed; the old text is gone after the fold', async (t) => {
  const { index } = await freshIndex(t);
  const first = await IndexWriter.open(index);
  await writeAll(first, ANIMALS);
  await first.close();

  const changed = page('https://zoo.example/camel', { title: 'Camel', text: 'The camel has two humps and walks through the steppe.' });
  const second = await IndexWriter.open(index);
  await writeAll(second, [...ANIMALS.slice(0, 2), changed]);
  const counters = await second.close();
  t.like(counters, { received: 3, written: 1, unchanged: 2 });
  t.is((await index.stats()).documents, 3, 'the old row of the changed page was deleted');
  t.deepEqual((await index.search(query('steppe'))).hits.map((hit) => hit.page.url), ['https://zoo.example/camel']);
  t.deepEqual((await index.search(query('desert'))).hits, []);
});

test('with an embedder every page is stored with its windows\' vectors; the nearest page comes first in a vector search', async (t) => {
  const { index } = await freshIndex(t);
  const embedder = bagOfWordsEmbedder();
  const writer = await IndexWriter.open(index, { embedder });
  await writeAll(writer, ANIMALS);
  t.like(await writer.close(), { written: 3, embedded: 3 });
  t.is(index.vectorDimensions, DIMENSIONS);
  t.deepEqual((await index.stats()).vectors, { 'bag-of-words-v1': 3 });
  const hits = await index.vectorSearch({ ...query('otter river fish'), vector: await embedder.embedQuery('otter river fish'), models: embedder.reads });
  t.is(hits[0]!.page.url, 'https://zoo.example/otter');
  t.true(hits[0]!.score > hits[1]!.score);
  t.is(hits[0]!.vectors!.windows.length, 1);
  // Filters apply to the vector leg too.
  const filtered = await index.vectorSearch({ ...query('otter', { excludeDomains: ['zoo.example'] }), vector: await embedder.embedQuery('otter'), models: embedder.reads });
  t.deepEqual(filtered, []);
});

test('the vector width is read back when the index is opened again, and by an instance that was open while vectors came', async (t) => {
  const { index, directory } = await freshIndex(t);
  const reader = await openLocalIndex(directory);
  t.teardown(() => reader.close());
  t.is(reader.vectorDimensions, null);
  const writer = await IndexWriter.open(index, { embedder: bagOfWordsEmbedder() });
  await writeAll(writer, ANIMALS);
  await writer.close();
  const reopened = await openLocalIndex(directory);
  t.teardown(() => reopened.close());
  t.is(reopened.vectorDimensions, DIMENSIONS);
  // The instance open before is told on its next look at the schema (at most every few seconds).
  await new Promise((resolve) => setTimeout(resolve, 5_100));
  t.is(await reader.refreshVectorDimensions(), DIMENSIONS);
});

test('an index built before vectors is searched by BM25 alone, says so once, and --reembed gives its pages vectors', async (t) => {
  const { index } = await freshIndex(t);
  await index.upsert(ANIMALS);
  t.is(index.vectorDimensions, null);
  const embedder = bagOfWordsEmbedder();
  const reasons: string[] = [];
  const options = { weights: BY_COSINE, candidates: 10, embedder, onFullTextOnly: (reason: string) => reasons.push(reason) };
  const before = await hybridSearch(index, query('falcon'), options);
  t.deepEqual(before.hits.map((hit) => [hit.page.url, hit.relevance]), [['https://zoo.example/falcon', null]]);
  t.regex(reasons[0]!, /no vectors.*--reembed/);

  // What `searchgate index add --reembed` does: every page through a writer with the model.
  const writer = await IndexWriter.open(index, { embedder });
  for await (const stored of index.export()) void writer.add(stored);
  t.like(await writer.close(), { written: 3, embedded: 3 });
  t.deepEqual((await index.stats()).vectors, { 'bag-of-words-v1': 3 });
  const after = await hybridSearch(index, query('falcon sky birds'), options);
  t.is(after.hits[0]!.page.url, 'https://zoo.example/falcon');
  t.true(after.hits[0]!.relevance! > 0.5);

  // Run again: nothing to do, the vectors are current.
  const again = await IndexWriter.open(index, { embedder });
  for await (const stored of index.export()) void again.add(stored);
  t.like(await again.close(), { written: 0, unchanged: 3 });
  t.is(embedder.pagesEmbedded, 3);

  // A model change re-embeds everything once.
  const next = bagOfWordsEmbedder('bag-of-words-v2');
  const upgrade = await IndexWriter.open(index, { embedder: next });
  for await (const stored of index.export()) void upgrade.add(stored);
  t.like(await upgrade.close(), { written: 3, embedded: 3 });
  t.deepEqual((await index.stats()).vectors, { 'bag-of-words-v2': 3 });
});

test('hybrid search finds by meaning what full text cannot, ranks by the calibrated score, and pages through it', async (t) => {
  const { index } = await freshIndex(t);
  const embedder = bagOfWordsEmbedder();
  const writer = await IndexWriter.open(index, { embedder });
  const pages = [
    ...ANIMALS,
    ...Array.from({ length: 12 }, (_, i) => page(`https://filler.example/${i}`, { title: `Note ${i}`, text: `meadow harbor engine number ${i}` })),
  ];
  await writeAll(writer, pages);
  await writer.close();
  const options = { weights: BY_COSINE, candidates: 5, embedder };
  // "crabs fish rivers" matches the otter's text in full text; the vector leg adds pages that share no term.
  const { hits } = await hybridSearch(index, query('otter crabs', { limit: 3 }), options);
  t.is(hits[0]!.page.url, 'https://zoo.example/otter');
  t.true(hits.every((hit, i) => i === 0 || hits[i - 1]!.relevance! >= hit.relevance!), 'best first');
  // A later page is the same ranking, further on.
  const four = await hybridSearch(index, query('otter crabs', { limit: 4 }), options);
  const second = await hybridSearch(index, query('otter crabs', { limit: 3, offset: 1 }), options);
  t.deepEqual(second.hits.map((hit) => hit.page.url), four.hits.slice(1).map((hit) => hit.page.url));
});

test('vectors made before title vectors keep serving, the index gains the title column, and re-embedding adds the titles', async (t) => {
  const directory = await temporaryDirectory(t);
  // An index as the version before title vectors wrote it: window vectors under the windows' stamp,
  // vector columns without the title's.
  const older = bagOfWordsEmbedder('bag-of-words-v1');
  const embedded = await older.embedPages(ANIMALS);
  const connection = await lancedb.connect(directory);
  const schema = pageSchema(DIMENSIONS);
  const earlier = new Schema(schema.fields.filter((field) => field.name !== TITLE_VECTOR_COLUMN), schema.metadata);
  const table = await connection.createEmptyTable(PAGES_TABLE, earlier);
  const rows = ANIMALS.map((animal, i) => toRow({ ...animal, vectors: { model: 'bag-of-words-v1', windows: embedded[i]!.windows, title: null } }, Date.now() * 1000, { vectors: true, titleVector: false }));
  await table.add(lancedb.makeArrowTable(rows as unknown as Record<string, unknown>[], { schema: earlier }));
  table.close();
  connection.close();

  const index = await openLocalIndex(directory);
  t.teardown(() => index.close());
  await index.fold();
  // A reader open before the title column comes, as a gateway would be.
  const reader = await openLocalIndex(directory);
  t.teardown(() => reader.close());
  // Today's model of the same windows: its pages carry title vectors, under a stamp of their own.
  const base = bagOfWordsEmbedder('bag-of-words-v1');
  const current = Object.assign(base, { model: 'bag-of-words-v1+title', reads: ['bag-of-words-v1+title', 'bag-of-words-v1'] });
  const candidatesOf = async (of: typeof index, text: string) => {
    const found = await hybridCandidates(of, query(text), current, 10);
    if ('fullTextOnly' in found) throw new Error(found.fullTextOnly);
    return found;
  };

  // Served as they are: no title vectors, so the title cosine is the first window's.
  const before = await candidatesOf(index, 'otter river fish');
  t.true(before.features.every((features) => features.titleCosine === features.cosine));
  t.is((await hybridSearch(index, query('otter river fish'), { weights: BY_COSINE, candidates: 10, embedder: current })).hits[0]!.page.url, 'https://zoo.example/otter');

  // What `index add --reembed` does: the pages of another stamp are embedded again, titles too.
  const writer = await IndexWriter.open(index, { embedder: current });
  for await (const stored of index.export()) void writer.add(stored);
  t.like(await writer.close(), { written: 3, embedded: 3 });
  t.deepEqual((await index.stats()).vectors, { 'bag-of-words-v1+title': 3 });
  const after = await candidatesOf(index, 'otter river fish');
  const otter = after.candidates.findIndex(({ hit }) => hit.page.title === 'Otter');
  t.is(after.candidates[otter]!.hit.vectors!.title!.length, DIMENSIONS);
  // The title alone ("Otter") against the query, not the window of title and text.
  t.is(after.features[otter]!.titleCosine, cosineOf(await current.embedQuery('otter river fish'), await current.embedQuery('Otter')));
  t.not(after.features[otter]!.titleCosine, after.features[otter]!.cosine);

  // The reader open all along reads the title vectors once it looks at the schema again.
  await new Promise((resolve) => setTimeout(resolve, 5_100));
  const seen = await candidatesOf(reader, 'otter river fish');
  t.is(seen.features[seen.candidates.findIndex(({ hit }) => hit.page.title === 'Otter')]!.titleCosine, after.features[otter]!.titleCosine);
});

const cosineOf = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
