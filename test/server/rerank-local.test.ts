/** /v1/rerank and web-search reranking over HTTP with the embedded model, and its start-up checks. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { createAjv, responseValidators } from '../../src/api/validate.js';
import { openLocalIndex } from '../../src/local/index/index.js';
import { contentHash } from '../../src/local/ingest/indexed-page.js';
import { ModelDirectoryError } from '../../src/local/rerank/model.js';
import { acquireReranker } from '../../src/local/shared.js';
import type { IndexedPage } from '../../src/local/types.js';
import { assertPromtoolAccepts, metricIn } from '../helpers/faults.js';
import { REAL_LOCAL_RERANKER, TEST_MODEL_DIRECTORY, startGateway } from '../helpers/gateway.js';

const validators = responseValidators(createAjv());
const QUERY = 'what is the capital of france';
const PARIS = 'Paris is the capital and largest city of France.';
const BANANAS = 'Bananas are rich in potassium.';
const BERLIN = 'Berlin is the capital of Germany.';

const withModel = (extra: Record<string, unknown> = {}) =>
  startGateway({ providers: { 'local-reranker': REAL_LOCAL_RERANKER }, cache: { enabled: false }, ...extra });

test.serial('with no rerank config, service-reranker-v1 is the embedded model: Paris first and above 0.5, bananas below 0.1', async (t) => {
  const gateway = await withModel();
  t.teardown(() => gateway.close());
  const response = await gateway.post('/v1/rerank', { model: 'service-reranker-v1', query: QUERY, documents: [BANANAS, BERLIN, PARIS], return_documents: true });
  const body = (await response.json()) as any;
  t.is(response.status, 200, JSON.stringify(body));
  t.true(validators.rerank(body), JSON.stringify(validators.rerank.errors));
  const byText = Object.fromEntries(body.results.map((r: any) => [r.document.text, r.relevance_score]));
  t.is(body.results[0].document.text, PARIS);
  t.true(byText[PARIS] > 0.5, JSON.stringify(byText));
  t.true(byText[BANANAS] < 0.1, JSON.stringify(byText));
  t.true(gateway.logLines.some((line) => line.includes('reranker model loaded')));
});

test.serial('identical documents in one request are scored once and get the same score', async (t) => {
  const gateway = await withModel();
  t.teardown(() => gateway.close());
  const lease = acquireReranker(TEST_MODEL_DIRECTORY);
  t.teardown(() => lease.release());
  const reranker = await lease.reranker;
  const before = reranker.stats.documents;
  const response = await gateway.post('/v1/rerank', { query: QUERY, documents: [PARIS, BANANAS, PARIS, PARIS] });
  const body = (await response.json()) as any;
  t.is(response.status, 200);
  t.is(reranker.stats.documents - before, 2);
  const scores = body.results.filter((r: any) => r.index !== 1).map((r: any) => r.relevance_score);
  t.deepEqual(new Set(scores).size, 1);
});

test.serial('a rerank that overruns the request deadline is a 504 in the spec error body', async (t) => {
  const gateway = await withModel({ server: { requestTimeoutMs: 150 } });
  t.teardown(() => gateway.close());
  const patient = await withModel();
  t.teardown(() => patient.close());
  const long = Array.from({ length: 16 }, (_, i) => `Document ${i}. ` + 'The committee reviewed the annual budget in detail. '.repeat(40));
  const response = await gateway.post('/v1/rerank', { query: QUERY, documents: long });
  const body = (await response.json()) as any;
  t.is(response.status, 504, JSON.stringify(body));
  t.is(body.code, '504');
  t.truthy(body.log_id);
  // The batch already running finishes unobserved; the shared reranker then serves the next request.
  const next = await patient.post('/v1/rerank', { query: QUERY, documents: [PARIS] });
  t.is(next.status, 200);
});

test.serial('a configured model that is missing or corrupt stops the start with a message naming the file', async (t) => {
  await t.throwsAsync(startGateway({ providers: { 'local-reranker': { type: 'local-reranker', model: '/nonexistent/model-dir' } } }), {
    instanceOf: ModelDirectoryError,
    message: /\/nonexistent\/model-dir does not exist/,
  });

  const directory = mkdtempSync(join(tmpdir(), 'searchgate-cli-model-'));
  writeFileSync(join(directory, 'searchgate-model.json'), '{"family": "bi-encoder"}');
  writeFileSync(join(directory, 'model.onnx'), 'garbage');
  writeFileSync(join(directory, 'tokenizer.json'), '{}');
  writeFileSync(join(directory, 'tokenizer_config.json'), '{}');
  const config = join(directory, 'config.yaml');
  writeFileSync(config, `providers: {local-reranker: {type: local-reranker, model: "${directory}"}}\n`);
  const child = spawn(process.execPath, ['dist/src/cli/main.js', 'serve'], { env: { ...process.env, SEARCHGATE_CONFIG: config, PORT: '0' } });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = await once(child, 'close');
  t.is(code, 78);
  t.regex(stderr, /cannot start: reranker (tokenizer|model)/);
  t.true(stderr.includes(directory));
  t.false(/\n\s+at /.test(stderr), 'no stack trace');
});

function page(url: string, title: string, text: string): IndexedPage {
  return { url, canonicalUrl: url, title, text, datePublished: null, domain: new URL(url).hostname, language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(text) };
}

test.serial('web-search results from the local index are reranked by the model before the cut to count', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-rerank-index-'));
  const index = await openLocalIndex(directory);
  // BM25 loves the page that repeats the query words; the model knows which page answers.
  await index.upsert([
    page(
      'https://stuffed.example/',
      'France capital gains tax',
      'Capital gains tax in France: capital gains on French shares are taxed at 30 percent. France capital gains, capital losses and capital allowances explained.',
    ),
    page('https://answer.example/', 'Paris', 'Paris is the capital and largest city of France, on the Seine.'),
    page('https://other.example/', 'Bananas', 'Bananas are rich in potassium, and France imports many.'),
  ]);
  await index.close();
  const config = (rerankModel: string | null) => ({
    providers: { local: { type: 'local', directory }, 'local-reranker': REAL_LOCAL_RERANKER },
    search: { chain: ['local'], rerank: { model: rerankModel } },
    cache: { enabled: false },
  });
  const plain = await startGateway(config(null));
  t.teardown(() => plain.close());
  const reranked = await startGateway(config('service-reranker-v1'));
  t.teardown(() => reranked.close());
  const urls = async (gateway: typeof plain, count: number) => {
    const response = await gateway.post('/v1/web-search', { query: 'capital of france', count });
    const body = (await response.json()) as any;
    t.is(response.status, 200, JSON.stringify(body));
    return body.data.webPages.value.map((r: any) => r.url);
  };
  t.is((await urls(plain, 1))[0], 'https://stuffed.example/', 'precondition: BM25 alone ranks the stuffed page first');
  t.deepEqual(await urls(reranked, 1), ['https://answer.example/'], 'reranked over all candidates, then cut to count');
  t.is((await urls(reranked, 3))[0], 'https://answer.example/');
});

test.serial('when reranking fails, web-search still answers in the provider order and says why in the log', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-rerank-index-'));
  const index = await openLocalIndex(directory);
  await index.upsert([page('https://a.example/', 'Alpha', 'alpha beta'), page('https://b.example/', 'Alpha two', 'alpha gamma')]);
  await index.close();
  // The helper's default: the implicit reranker points at a model that is not there.
  const gateway = await startGateway({ providers: { local: { type: 'local', directory } }, search: { chain: ['local'] }, cache: { enabled: false } });
  t.teardown(() => gateway.close());
  const response = await gateway.post('/v1/web-search', { query: 'alpha', count: 2 });
  t.is(response.status, 200);
  t.is(((await response.json()) as any).data.webPages.value.length, 2);
  t.true(gateway.logLines.some((line) => line.includes('reranking failed')));
});

test.serial('a long document is scored on its first maxDocumentCharacters: what comes later neither counts nor costs windows', async (t) => {
  const gateway = await withModel({ providers: { 'local-reranker': { ...REAL_LOCAL_RERANKER, maxDocumentCharacters: 2000 } } });
  t.teardown(() => gateway.close());
  const windows = async () => metricIn(await (await fetch(`${gateway.url}/metrics`)).text(), 'searchgate_local_reranker_windows_total', { provider: 'local-reranker' });
  // 330 KB of bananas, and the answer only at the end: past the cap.
  const long = `${`${BANANAS} `.repeat(10_000)}${PARIS}`;
  const before = await windows();
  const response = await gateway.post('/v1/rerank', { query: QUERY, documents: [long, PARIS] });
  const body = (await response.json()) as any;
  t.is(response.status, 200, JSON.stringify(body));
  const scores = Object.fromEntries(body.results.map((r: any) => [r.index, r.relevance_score]));
  t.true(scores[1] > 0.5 && scores[0] < 0.1, JSON.stringify(scores));
  // 2,000 characters are a few windows; the whole document would be hundreds.
  t.true((await windows()) - before <= 6, `windows scored: ${(await windows()) - before}`);
});

test.serial('/metrics shows the local reranker queue and work, and passes promtool', async (t) => {
  const gateway = await withModel();
  t.teardown(() => gateway.close());
  const documentsMetric = async () => {
    const text = await (await fetch(`${gateway.url}/metrics`)).text();
    return { text, documents: metricIn(text, 'searchgate_local_reranker_documents_total', { provider: 'local-reranker' }) };
  };
  const before = await documentsMetric();
  t.is((await gateway.post('/v1/rerank', { query: QUERY, documents: [PARIS, BANANAS, BERLIN] })).status, 200);
  const after = await documentsMetric();
  t.is(after.documents - before.documents, 3);
  t.regex(after.text, /searchgate_local_reranker_queued_documents\{provider="local-reranker"\} 0/);
  t.regex(after.text, /searchgate_local_reranker_windows_total\{provider="local-reranker"\} \d+/);
  assertPromtoolAccepts(t, after.text);

  // The same documents again (another query): every window comes from the embedding cache, and the
  // counters say so.
  const windows = (text: string) => metricIn(text, 'searchgate_local_reranker_windows_total', { provider: 'local-reranker' });
  const cached = (text: string) => metricIn(text, 'searchgate_local_reranker_cached_windows_total', { provider: 'local-reranker' });
  t.is((await gateway.post('/v1/rerank', { query: 'which city is the capital of germany', documents: [PARIS, BANANAS, BERLIN] })).status, 200);
  const seen = await documentsMetric();
  t.is(windows(seen.text) - windows(after.text), 3);
  t.is(cached(seen.text) - cached(after.text), 3, 'all three windows came from the cache');
  t.is(seen.documents - after.documents, 3, 'documents still count every document scored');
});
