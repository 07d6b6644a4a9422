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
  t.throws(() => readModelDirectory(withoutGraph), { instanceOf: ModelDirectoryError, message: /model\.onnx is missing/ });
});

test.serial('a corrupt model file or spec is a ModelDirectoryError that names it', async (t) => {
  const corrupt = copyOfModel();
  writeFileSync(join(corrupt, 'model.onnx'), 'this is not an ONNX graph');
  await t.throwsAsync(NeuralReranker.open(corrupt), { instanceOf: ModelDirectoryError, message: /model\.onnx is not a loadable ONNX model/ });

  const badSpec = copyOfModel();
  copyFileSync(join(TEST_MODEL_DIRECTORY, 'model.onnx'), join(badSpec, 'model.onnx'));
  writeFileSync(join(badSpec, 'searchgate-model.json'), '{"family": "mystery"}');
  t.throws(() => readModelDirectory(badSpec), { instanceOf: ModelDirectoryError, message: /searchgate-model\.json: "family" must be/ });
  writeFileSync(join(badSpec, 'searchgate-model.json'), '{not json');
  t.throws(() => readModelDirectory(badSpec), { instanceOf: ModelDirectoryError, message: /is not valid JSON/ });
  writeFileSync(join(badSpec, 'searchgate-model.json'), JSON.stringify({ family: 'bi-encoder', output: 'nothing_like_this' }));
  await t.throwsAsync(NeuralReranker.open(badSpec), { instanceOf: ModelDirectoryError, message: /has no output "nothing_like_this"/ });
});

test.serial('a bi-encoder reuses document-window embeddings across requests, with the same scores', async (t) => {
  const reranker = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { embeddingCacheEntries: 100 });
  t.teardown(() => reranker.close());
  const uncached = await NeuralReranker.open(TEST_MODEL_DIRECTORY, { embeddingCacheEntries: 0 });
  t.teardown(() => uncached.close());
  const documents = [PARIS, BANANAS, `${FILLER} ${PARIS}`];
  const first = await reranker.score(QUERY, documents);
  const cachedBefore = reranker.stats.cachedWindows;
  const again = await reranker.score('which fruit has potassium', documents);
  t.true(reranker.stats.cachedWindows - cachedBefore >= 4, 'every document window came from the cache');
  const reference = await uncached.score('which fruit has potassium', documents);
  again.forEach((score, i) => t.true(Math.abs(score - reference[i]!) < 1e-6, `${score} vs ${reference[i]}`));
  t.notDeepEqual(first, again, 'another query, other scores');
});
