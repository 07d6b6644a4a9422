/**
 * The embedded reranker with the real model (scripts/fetch-model.sh prepares it; .ci/run fetches it):
 * loading, scoring, windows, batching across concurrent requests, deadlines and a bounded queue.
 */
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { NeuralReranker, QueueFullError } from '../../../src/local/rerank/engine.js';
import { ModelDirectoryError, readModelDirectory } from '../../../src/local/rerank/model.js';
import { TEST_MODEL_DIRECTORY } from '../../helpers/gateway.js';

const QUERY = 'what is the capital of france';
const PARIS = 'Paris is the capital and largest city of France.';
const BANANAS = 'Bananas are rich in potassium.';
const BERLIN = 'Berlin is the capital of Germany.';

/** ~1,500 words about something else entirely, so the answer is far past the first window. */
const FILLER = Array.from({ length: 150 }, (_, i) => `Gardeners water tomato plant number ${i} every morning in summer.`).join(' ');

let shared: NeuralReranker;
test.before(async () => {
  shared = await NeuralReranker.open(TEST_MODEL_DIRECTORY);
});
test.after.always(async () => {
  await shared?.close();
});

test.serial('the real model loads and gives every document a score in [0, 1], in document order', async (t) => {
  const scores = await shared.score(QUERY, [BANANAS, PARIS, BERLIN]);
  t.is(scores.length, 3);
  for (const score of scores) t.true(score >= 0 && score <= 1, String(score));
  t.true(scores[1]! > scores[2]! && scores[2]! > scores[0]!, JSON.stringify(scores));
  t.truthy(shared.spec.calibration, 'the committed model spec carries a fitted calibration');
});

test.serial('semantic check: Paris scores highest and above 0.5, bananas below 0.1', async (t) => {
  const [paris, bananas, berlin] = await shared.score(QUERY, [PARIS, BANANAS, BERLIN]);
  t.true(paris! > 0.5, `Paris ${paris}`);
  t.true(bananas! < 0.1, `bananas ${bananas}`);
  t.true(paris! > berlin! && paris! > bananas!, JSON.stringify({ paris, berlin, bananas }));
});

test.serial('a long document is cut into overlapping windows and scored by its best one; none is rejected for length', async (t) => {
  const answerAtTheEnd = `${FILLER} ${PARIS}`;
  const raw = await shared.scoreRaw(QUERY, [answerAtTheEnd, FILLER, PARIS]);
  t.true(raw.windows >= 2 + 2 + 1, `windows: ${raw.windows}`);
  const [late, fillerOnly, short] = raw.semantic;
  // Truncated to its first window, the document would score like the filler; its last window,
  // which holds the answer, lifts it far above. (Mean pooling over a window of mostly filler keeps it
  // below the answer on its own.)
  t.true(late! > fillerOnly! + 0.2, JSON.stringify(raw.semantic));
  t.true(short! > late!, JSON.stringify(raw.semantic));

  const huge = `${FILLER} `.repeat(4) + PARIS; // ~6,000 words
  const [hugeScore] = await shared.score(QUERY, [huge]);
  t.true(Number.isFinite(hugeScore) && hugeScore! >= 0 && hugeScore! <= 1);
});

test.serial('concurrent requests share dispatches and each gets the scores it would get alone', async (t) => {
  const reranker = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { maxDispatchDocuments: 64 });
  t.teardown(() => reranker.close());
  const requests = Array.from({ length: 8 }, (_, i) => ({
    query: i % 2 ? QUERY : 'which fruit has potassium',
    documents: [PARIS, BANANAS, `${BERLIN} Item ${i}.`],
  }));
  const alone: number[][] = [];
  for (const request of requests) alone.push(await reranker.score(request.query, request.documents));
  const dispatchesBefore = reranker.stats.dispatches;
  const together = await Promise.all(requests.map((request) => reranker.score(request.query, request.documents)));
  const dispatches = reranker.stats.dispatches - dispatchesBefore;
  t.true(dispatches < requests.length, `${dispatches} dispatches for ${requests.length} concurrent requests`);
  together.forEach((scores, i) => scores.forEach((score, k) => t.true(Math.abs(score - alone[i]![k]!) < 1e-4, `${score} vs ${alone[i]![k]}`)));
});

test.serial('a request whose deadline passes while queued leaves the queue; the reranker keeps serving', async (t) => {
  const reranker = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { maxDispatchDocuments: 1 });
  t.teardown(() => reranker.close());
  const busy = reranker.score(QUERY, [`${FILLER} ${PARIS}`]);
  const deadline = AbortSignal.timeout(20);
  const late = reranker.score(QUERY, [PARIS, BANANAS], deadline);
  const reason = await late.then(
    () => null,
    (error: unknown) => error as { name?: string },
  );
  t.is(reason?.name, 'TimeoutError');
  t.is(reranker.pendingDocuments, 0);
  await busy;
  const after = await reranker.score(QUERY, [PARIS]);
  t.is(after.length, 1);
});

test.serial('an already aborted signal is refused without queueing', async (t) => {
  const controller = new AbortController();
  controller.abort(new Error('gone'));
  await t.throwsAsync(shared.score(QUERY, [PARIS], controller.signal), { message: 'gone' });
});

test.serial('the queue is bounded in documents: beyond it a request is refused at once', async (t) => {
  const reranker = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { maxDispatchDocuments: 1, maxQueuedDocuments: 3 });
  t.teardown(() => reranker.close());
  const running = reranker.score(QUERY, [`${FILLER} ${PARIS}`]);
  const queued = reranker.score(QUERY, [PARIS, BANANAS]);
  await t.throwsAsync(reranker.score(QUERY, [BERLIN, BANANAS]), { instanceOf: QueueFullError });
  t.is((await running).length, 1);
  t.is((await queued).length, 2);
});

/** The graph file of the model under test (model_int8.onnx for the default, model.onnx for fp32). */
const GRAPH = readModelDirectory(TEST_MODEL_DIRECTORY).spec.file;
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function copyOfModel(): string {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-model-'));
  for (const file of ['tokenizer.json', 'tokenizer_config.json', 'searchgate-model.json']) {
    copyFileSync(join(TEST_MODEL_DIRECTORY, file), join(directory, file));
  }
  return directory;
}

test.serial('a missing model directory or file is a ModelDirectoryError that names it', async (t) => {
  const missing = join(tmpdir(), 'searchgate-no-model-here');
  await t.throwsAsync(NeuralReranker.open(missing), { instanceOf: ModelDirectoryError, message: /searchgate-no-model-here does not exist; run `npm run fetch-model`/ });
  const withoutGraph = copyOfModel();
  t.throws(() => readModelDirectory(withoutGraph), { instanceOf: ModelDirectoryError, message: new RegExp(`${escaped(GRAPH)} is missing`) });
});

test.serial('a corrupt model file or spec is a ModelDirectoryError that names it', async (t) => {
  const corrupt = copyOfModel();
  writeFileSync(join(corrupt, GRAPH), 'this is not an ONNX graph');
  await t.throwsAsync(NeuralReranker.open(corrupt), { instanceOf: ModelDirectoryError, message: new RegExp(`${escaped(GRAPH)} is not a loadable ONNX model`) });

  const badSpec = copyOfModel();
  copyFileSync(join(TEST_MODEL_DIRECTORY, GRAPH), join(badSpec, 'model.onnx'));
  writeFileSync(join(badSpec, 'searchgate-model.json'), '{"family": "mystery"}');
  t.throws(() => readModelDirectory(badSpec), { instanceOf: ModelDirectoryError, message: /searchgate-model\.json: "family" must be/ });
  writeFileSync(join(badSpec, 'searchgate-model.json'), '{not json');
  t.throws(() => readModelDirectory(badSpec), { instanceOf: ModelDirectoryError, message: /is not valid JSON/ });
  writeFileSync(join(badSpec, 'searchgate-model.json'), JSON.stringify({ family: 'bi-encoder', quantization: 'int3' }));
  t.throws(() => readModelDirectory(badSpec), { instanceOf: ModelDirectoryError, message: /"quantization" must be "none" or "dynamic-int8"/ });
  writeFileSync(join(badSpec, 'searchgate-model.json'), JSON.stringify({ family: 'bi-encoder', output: 'nothing_like_this' }));
  await t.throwsAsync(NeuralReranker.open(badSpec), { instanceOf: ModelDirectoryError, message: /has no output "nothing_like_this"/ });
});

test.serial('a document seen before is neither tokenized nor embedded again, and scores the same', async (t) => {
  const reranker = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { embeddingCacheBytes: 1 << 20 });
  t.teardown(() => reranker.close());
  const uncached = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { embeddingCacheBytes: 0 });
  t.teardown(() => uncached.close());
  t.is(uncached.cache, null);
  const documents = [PARIS, BANANAS, `${FILLER} ${PARIS}`];
  const first = await reranker.scoreRaw(QUERY, documents);
  t.is(reranker.stats.embeddedDocuments, 3);
  t.is(reranker.cache!.size, 3);
  const windowsBefore = reranker.stats.windows;
  const cachedBefore = reranker.stats.cachedWindows;
  const again = await reranker.scoreRaw('which fruit has potassium', documents);
  // The workers were sent no document at all: nothing was tokenized or run for them.
  t.is(reranker.stats.embeddedDocuments, 3, 'no document went to the model again');
  t.is(reranker.stats.cachedWindows - cachedBefore, first.windows, 'every window came from the cache');
  t.is(reranker.stats.windows - windowsBefore, first.windows, 'windows still count every window scored');
  t.is(again.windows, first.windows);
  const reference = await uncached.scoreRaw('which fruit has potassium', documents);
  again.semantic.forEach((score, i) => t.true(Math.abs(score - reference.semantic[i]!) < 1e-6, `${score} vs ${reference.semantic[i]}`));
  t.deepEqual(again.lexical, reference.lexical);
  t.notDeepEqual(first.semantic, again.semantic, 'another query, other scores');
  // The same query again gives exactly the first scores: the cached vectors are the model's own.
  t.deepEqual((await reranker.scoreRaw(QUERY, documents)).semantic, first.semantic);
});

test.serial('the embedding cache is bounded in bytes: an evicted document is embedded again', async (t) => {
  // Room for about two one-window documents (384 floats = 1,536 bytes, plus the entry allowance).
  const reranker = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { embeddingCacheBytes: 4500 });
  t.teardown(() => reranker.close());
  const documents = [PARIS, BANANAS, BERLIN];
  for (const document of documents) await reranker.score(QUERY, [document]);
  t.is(reranker.stats.embeddedDocuments, 3);
  t.true(reranker.cache!.bytes <= 4500, String(reranker.cache!.bytes));
  t.is(reranker.cache!.size, 2);
  await reranker.score(QUERY, [BERLIN, BANANAS]);
  t.is(reranker.stats.embeddedDocuments, 3, 'the two most recent documents were still there');
  await reranker.score(QUERY, [PARIS]);
  t.is(reranker.stats.embeddedDocuments, 4, 'the least recently used one was evicted and is embedded again');
  // A document bigger than the whole bound is scored but never kept.
  await reranker.score(QUERY, [`${FILLER} ${PARIS}`]);
  await reranker.score(QUERY, [`${FILLER} ${PARIS}`]);
  t.is(reranker.stats.embeddedDocuments, 6);
  t.true(reranker.cache!.bytes <= 4500);
});

test.serial('several workers share a request and give the scores one worker gives', async (t) => {
  const one = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { workers: 1, threads: 1, embeddingCacheBytes: 0 });
  t.teardown(() => one.close());
  const three = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { workers: 3, threads: 3, embeddingCacheBytes: 0 });
  t.teardown(() => three.close());
  t.like(three.options, { workers: 3, threadsPerWorker: 1 });
  const documents = [PARIS, BANANAS, BERLIN, `${FILLER} ${PARIS}`, FILLER, 'Lyon is a city in France.'];
  const alone = await one.scoreRaw(QUERY, documents);
  const shared = await three.scoreRaw(QUERY, documents);
  t.is(shared.windows, alone.windows);
  shared.semantic.forEach((score, i) => t.true(Math.abs(score - alone.semantic[i]!) < 1e-6, `${score} vs ${alone.semantic[i]}`));
  t.deepEqual(shared.lexical, alone.lexical);
});

test.serial('embed: unit vectors of the model width for queries and documents, a document cut to maxWindows, no cache and no dispatch', async (t) => {
  t.is(shared.dimensions, 384);
  const before = { ...shared.stats };
  const capped = await shared.embed({ queries: [QUERY], documents: [FILLER, PARIS], maxWindows: 1 });
  const whole = await shared.embed({ queries: [], documents: [FILLER] });
  t.is(capped.queries.length, 1);
  t.is(capped.queries[0]!.length, 384);
  const norm = (vector: Float32Array) => Math.hypot(...vector);
  t.true(Math.abs(norm(capped.queries[0]!) - 1) < 1e-3);
  t.deepEqual(
    capped.documents.map((document) => document.windows),
    [1, 1],
  );
  t.true(whole.documents[0]!.windows > 5, `${whole.documents[0]!.windows} windows`);
  // The capped document's one window is the whole document's first.
  t.deepEqual(capped.documents[0]!.vectors, whole.documents[0]!.vectors.slice(0, 384));
  // The query's vector is closer to Paris than to the gardening text.
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
  t.true(dot(capped.queries[0]!, capped.documents[1]!.vectors) > dot(capped.queries[0]!, capped.documents[0]!.vectors));
  t.deepEqual(shared.stats, before, 'the reranker counters are for reranking alone');
});

test.serial('embed refuses on a closed reranker and an aborted signal', async (t) => {
  await t.throwsAsync(shared.embed({ queries: ['x'], documents: [] }, AbortSignal.abort(new Error('gone'))), { message: 'gone' });
  const other = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { workers: 1 });
  await other.close();
  await t.throwsAsync(other.embed({ queries: ['x'], documents: [] }), { message: /closed/ });
});
