/**
 * The pieces of the reranker that need no model: the byte-bounded cache of document embeddings,
 * how a task is split across workers and put back together, how cached and unseen documents are
 * told apart, and the provider's cache option old and new.
 */
import test from 'ava';
import { DocumentEmbeddingCache, ENTRY_OVERHEAD_BYTES, type DocumentEmbedding } from '../../../src/local/rerank/cache.js';
import { mergeResults, PART_CHARACTERS, taskParts } from '../../../src/local/rerank/engine.js';
import { bestCosine, lookUpDocuments, scoreJobs, type EmbeddingResult, type EmbeddingTask } from '../../../src/local/rerank/scoring.js';
import type { RerankModelSpec } from '../../../src/local/rerank/model.js';
import { embeddingCacheBytes, localRerankerOptionsSchema } from '../../../src/providers/local/rerank.js';

const DIMENSION = 4;

function embedding(windows: number, seed = 1): DocumentEmbedding {
  const vectors = new Float32Array(windows * DIMENSION);
  for (let i = 0; i < vectors.length; i++) vectors[i] = ((i + seed) % 7) - 3;
  return { vectors, windows };
}

const bytesOf = (windows: number) => windows * DIMENSION * 4 + ENTRY_OVERHEAD_BYTES;

test('keys: SHA-256 of the model stamp and the text; another stamp or text is another key', (t) => {
  const cache = new DocumentEmbeddingCache('model-a:0123', 1 << 20);
  const key = cache.key('Paris is the capital of France.');
  t.regex(key, /^[0-9a-f]{64}$/);
  t.is(cache.key('Paris is the capital of France.'), key);
  t.not(cache.key('Paris is the capital of France!'), key);
  t.not(new DocumentEmbeddingCache('model-b:0123', 1 << 20).key('Paris is the capital of France.'), key);
});

test('the cache is bounded in bytes: the least recently used documents leave first', (t) => {
  // Room for three two-window documents, not four.
  const cache = new DocumentEmbeddingCache('stamp', 3 * bytesOf(2) + 10);
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((text) => cache.key(text)) as [string, string, string, string];
  cache.set(a, embedding(2));
  cache.set(b, embedding(2));
  cache.set(c, embedding(2));
  t.is(cache.size, 3);
  t.is(cache.bytes, 3 * bytesOf(2));
  t.truthy(cache.get(a), 'a is used again, so b is now the least recent');
  cache.set(d, embedding(2));
  t.is(cache.size, 3);
  t.true(cache.bytes <= cache.maxBytes);
  t.true(cache.has(a) && cache.has(c) && cache.has(d));
  t.false(cache.has(b), 'b was evicted');

  // One big document pushes out as many small ones as it needs.
  cache.set(cache.key('big'), embedding(5));
  t.true(cache.bytes <= cache.maxBytes, String(cache.bytes));
  t.true(cache.has(cache.key('big')));
  t.is(cache.size, 1 + Math.floor((cache.maxBytes - bytesOf(5)) / bytesOf(2)));
});

test('a document larger than the whole bound is not kept, and a bound of 0 keeps nothing', (t) => {
  const small = new DocumentEmbeddingCache('stamp', bytesOf(2));
  small.set(small.key('huge'), embedding(3));
  t.is(small.size, 0);
  small.set(small.key('fits'), embedding(2));
  t.is(small.size, 1);
  const none = new DocumentEmbeddingCache('stamp', 0);
  none.set(none.key('x'), embedding(1));
  t.is(none.size, 0);
});

test('hits and misses are counted in documents, hits also in windows', (t) => {
  const cache = new DocumentEmbeddingCache('stamp', 1 << 20);
  cache.set(cache.key('x'), embedding(3));
  t.truthy(cache.get(cache.key('x')));
  t.is(cache.get(cache.key('y')), undefined);
  t.deepEqual(cache.stats, { hits: 1, misses: 1, hitWindows: 3 });
});

test('lookUpDocuments: cached documents are not sent again, repeats are sent once, every text gets its embedding', (t) => {
  const cache = new DocumentEmbeddingCache('stamp', 1 << 20);
  const seen = embedding(2, 5);
  cache.set(cache.key('seen'), seen);
  const lookup = lookUpDocuments(['new one', 'seen', 'new two', 'new one'], cache);
  t.deepEqual(lookup.unseen, ['new one', 'new two']);
  t.is(lookup.cachedWindows, 2);
  const one = embedding(1, 1);
  const two = embedding(3, 2);
  const all = lookup.complete([one, two]);
  t.deepEqual(all, [one, seen, two, one]);
  t.is(cache.get(cache.key('new two')), two, 'what the model computed is cached');
  t.throws(() => lookup.complete([one]), { message: /expected 2 document embeddings/ });

  const uncached = lookUpDocuments(['a', 'b', 'a'], null);
  t.deepEqual(uncached.unseen, ['a', 'b'], 'without a cache, repeats in one call are still embedded once');
});

test('bestCosine: the best window counts (MaxP), and unnormalised vectors are normalised', (t) => {
  const query = new Float32Array([1, 0, 0, 0]);
  const document: DocumentEmbedding = { vectors: new Float32Array([0, 2, 0, 0, 3, 3, 0, 0, 0, 0, 0, 5]), windows: 3 };
  t.true(Math.abs(bestCosine(query, document) - Math.SQRT1_2) < 1e-6);
});

const SPEC: RerankModelSpec = {
  id: 'fake',
  family: 'bi-encoder',
  file: 'model.onnx',
  output: 'last_hidden_state',
  pooling: 'mean',
  normalize: true,
  maxTokens: 256,
  windowOverlapTokens: 64,
  queryPrefix: '',
  documentPrefix: '',
  logitIndex: 0,
  lexicalWeight: 0,
  quantization: 'none',
  calibration: null,
      retrieval: null,
};

/** A stand-in for the model: each text's vector is made from its characters; counts what it was asked. */
function fakeRun(asked: EmbeddingTask[]) {
  const vectorOf = (text: string) => Float32Array.from({ length: DIMENSION }, (_, d) => (text.charCodeAt(d % text.length) % 13) + d);
  return async (task: EmbeddingTask): Promise<EmbeddingResult> => {
    asked.push(task);
    return {
      queries: task.queries.map(vectorOf),
      documents: task.documents.map((text) => ({ vectors: vectorOf(text), windows: 1 })),
      pairs: [],
      lexical: task.lexical.map((job) => job.documents.map(() => 0)),
    };
  };
}

test('scoreJobs: a document seen before is not sent to the model again, and scores the same', async (t) => {
  const asked: EmbeddingTask[] = [];
  const context = { spec: SPEC, cache: new DocumentEmbeddingCache('fake', 1 << 20), run: fakeRun(asked) };
  const first = await scoreJobs([{ query: 'q', documents: ['alpha', 'beta'] }], context);
  t.deepEqual(asked[0]!.documents, ['alpha', 'beta']);
  t.is(first.cachedWindows, 0);
  const again = await scoreJobs(
    [
      { query: 'q', documents: ['beta', 'gamma', 'alpha'] },
      { query: 'r', documents: ['gamma'] },
    ],
    context,
  );
  t.deepEqual(asked[1]!.documents, ['gamma'], 'only the unseen document, once for both jobs');
  t.deepEqual(asked[1]!.queries, ['q', 'r']);
  t.is(again.cachedWindows, 2);
  t.is(again.scores[0]!.semantic[0], first.scores[0]!.semantic[1]);
  t.is(again.scores[0]!.semantic[2], first.scores[0]!.semantic[0]);
  t.is(again.scores[0]!.windows, 3);
});

test('taskParts: long documents go one per part, longest first, short ones together; merged back in order', (t) => {
  const long = Array.from({ length: 6 }, (_, i) => `document ${i} `.repeat(100 + i * 10));
  const short = Array.from({ length: 10 }, (_, i) => `snippet ${i} about something.`);
  const documents = [...long, ...short];
  const task: EmbeddingTask = {
    queries: ['first query', 'second query'],
    documents,
    pairs: [],
    lexical: [{ query: 'first query', documents: documents.slice(0, 4) }],
  };
  const parts = taskParts(task, 2);
  const documentParts = parts.filter((part) => part.documents.length > 0);
  // Each long document alone, the longest first; the short ones in runs of about PART_CHARACTERS.
  t.deepEqual(
    documentParts.slice(0, long.length).map((part) => part.documents),
    [[5], [4], [3], [2], [1], [0]],
  );
  const shortParts = documentParts.slice(long.length);
  t.true(shortParts.length >= 1 && shortParts.length < short.length, `${shortParts.length} parts for ${short.length} snippets`);
  for (const part of shortParts.slice(0, -1)) t.true(part.task.documents.join('').length >= PART_CHARACTERS);
  t.deepEqual(documentParts.flatMap((part) => part.documents).sort((a, b) => a - b), documents.map((_, i) => i));
  t.deepEqual(parts.flatMap((part) => part.task.queries), ['first query', 'second query']);
  t.is(parts.flatMap((part) => part.task.lexical).length, 1);

  // Each "worker" answers with the index of its texts; the merge must put every answer in place.
  const results = parts.map(
    (part): EmbeddingResult => ({
      queries: part.task.queries.map((query) => Float32Array.of(task.queries.indexOf(query))),
      documents: part.task.documents.map((text) => ({ vectors: Float32Array.of(documents.indexOf(text)), windows: 1 })),
      pairs: [],
      lexical: part.task.lexical.map(() => [7, 7, 7, 7]),
    }),
  );
  const merged = mergeResults(task, parts, results);
  t.deepEqual(
    merged.documents.map((document) => document.vectors[0]),
    documents.map((_, i) => i),
  );
  t.deepEqual(
    merged.queries.map((vector) => vector[0]),
    [0, 1],
  );
  t.deepEqual(merged.lexical, [[7, 7, 7, 7]]);
});

test('taskParts: a cross-encoder job is cut by document and comes back whole; one worker gets the task as it is', (t) => {
  const task: EmbeddingTask = {
    queries: [],
    documents: [],
    pairs: [
      { query: 'q0', documents: ['a'.repeat(2000), 'b'.repeat(1500), 'c', 'dd'] },
      { query: 'q1', documents: ['e'] },
    ],
    lexical: [],
  };
  const parts = taskParts(task, 3);
  t.is(parts.length, 4, 'two long documents alone, the two short ones together, the other job');
  const results = parts.map(
    (part): EmbeddingResult => ({
      queries: [],
      documents: [],
      pairs: part.task.pairs.map((job) => ({ semantic: job.documents.map((text) => text.length), windows: job.documents.map(() => 1) })),
      lexical: [],
    }),
  );
  const merged = mergeResults(task, parts, results);
  t.deepEqual(merged.pairs, [
    { semantic: [2000, 1500, 1, 2], windows: [1, 1, 1, 1] },
    { semantic: [1], windows: [1] },
  ]);
  const alone = taskParts(task, 1);
  t.is(alone.length, 1);
  t.is(alone[0]!.task, task);
  t.deepEqual(taskParts({ queries: [], documents: [], pairs: [], lexical: [] }, 2), [], 'an empty task sends nothing');
});

test('the provider bounds the cache in bytes (64 MiB by default); an old embeddingCacheEntries still works', (t) => {
  t.is(embeddingCacheBytes({}), 64 * 1024 * 1024);
  t.is(embeddingCacheBytes({ embeddingCacheBytes: 1000 }), 1000);
  t.is(embeddingCacheBytes({ embeddingCacheBytes: 0, embeddingCacheEntries: 100 }), 0, 'the byte bound wins');
  t.is(embeddingCacheBytes({ embeddingCacheEntries: 0 }), 0, 'an old config that turned the cache off keeps it off');
  t.is(embeddingCacheBytes({ embeddingCacheEntries: 16_384 }), 16_384 * 1536);
  t.truthy(localRerankerOptionsSchema.properties.embeddingCacheBytes);
  t.truthy(localRerankerOptionsSchema.properties.embeddingCacheEntries);
  t.false('default' in localRerankerOptionsSchema.properties.embeddingCacheBytes, 'no schema default, so an old entry bound is not overridden');
});
