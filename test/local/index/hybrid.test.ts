/**
 * The hybrid scorer's features (src/local/index/hybrid.ts) on hand-made candidates, and a spec fitted
 * before a feature existed: it still loads, and scores as it did.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { featuresOf, fuse, relevance, type HybridWeights } from '../../../src/local/index/hybrid.js';
import { readModelDirectory, RETRIEVAL_FEATURES } from '../../../src/local/rerank/model.js';
import type { IndexHit } from '../../../src/local/types.js';

const MODEL = 'probe-model';

function hit(name: string, score: number, title = name): IndexHit {
  const vector = new Float32Array([1, 0]);
  return {
    page: {
      url: `https://example.org/${name}`,
      canonicalUrl: `https://example.org/${name}`,
      title,
      text: `${title} text`,
      datePublished: null,
      domain: 'example.org',
      language: 'en',
      fetchedAt: '2026-01-01T00:00:00.000Z',
      contentHash: name,
    },
    score,
    snippet: '',
    vectors: { model: MODEL, windows: [vector], title: null },
  };
}

test('fullTextScore is a page\'s BM25 score as a share of the query\'s best; a page of the vector leg alone gets the leg\'s lowest', (t) => {
  const fullText = [hit('a', 12), hit('b', 6), hit('c', 3)];
  // The vector leg's own scores are cosines: they must not be read as BM25.
  const vector = [hit('b', 0.9), hit('d', 0.8)];
  const candidates = fuse(fullText, vector);
  const features = featuresOf('a query', new Float32Array([1, 0]), candidates);
  const byName = Object.fromEntries(candidates.map(({ hit: { page } }, i) => [page.contentHash, features[i]!.fullTextScore]));
  t.deepEqual(byName, { a: 1, b: 0.5, c: 0.25, d: 0.25 });
});

test('fullTextScore is 0 for every candidate when the full-text leg found nothing', (t) => {
  const candidates = fuse([], [hit('d', 0.8), hit('e', 0.7)]);
  t.deepEqual(
    featuresOf('a query', new Float32Array([1, 0]), candidates).map((features) => features.fullTextScore),
    [0, 0],
  );
});

test('the fitted weights of fullTextScore and titleCosine move the score; a spec fitted before them loads with their weights at 0', (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-hybrid-spec-'));
  t.teardown(() => rmSync(directory, { recursive: true, force: true }));
  const committed = JSON.parse(readFileSync('config/models/all-minilm-l6-v2.json', 'utf8')) as { retrieval: Record<string, number> };
  t.true(RETRIEVAL_FEATURES.every((name) => Number.isFinite(committed.retrieval[name])), 'the committed spec has a weight for every feature');
  // A spec of before either later feature: fitted on the first seven, or the first six.
  const { fullTextScore: _dropped, titleCosine: _titleDropped, ...older } = committed.retrieval;
  writeFileSync(join(directory, 'searchgate-model.json'), JSON.stringify({ ...committed, retrieval: older }));
  for (const file of ['model_int8.onnx', 'tokenizer.json', 'tokenizer_config.json']) writeFileSync(join(directory, file), '{}');

  const { spec } = readModelDirectory(directory);
  t.is(spec.retrieval!.fullTextScore, 0);
  t.is(spec.retrieval!.titleCosine, 0);
  const weights = spec.retrieval! as HybridWeights;
  const features = { cosine: 0.5, lexical: 2, titleCoverage: 0.5, exactTitle: 0, bm25Rank: 1 / 61, vectorRank: 1 / 62, titleCosine: 0.5 };
  // Without the feature's weight, its value changes nothing: the older spec scores as it was fitted.
  t.is(relevance(weights, { ...features, fullTextScore: 1 }), relevance(weights, { ...features, fullTextScore: 0 }));
  t.is(relevance(weights, { ...features, fullTextScore: 1, titleCosine: 0.9 }), relevance(weights, { ...features, fullTextScore: 1, titleCosine: 0.1 }));
  const fitted = committed.retrieval as unknown as HybridWeights;
  t.true(relevance(fitted, { ...features, fullTextScore: 1 }) > relevance(fitted, { ...features, fullTextScore: 0.2 }), 'a better BM25 share scores higher');
  t.true(relevance(fitted, { ...features, fullTextScore: 1, titleCosine: 0.9 }) > relevance(fitted, { ...features, fullTextScore: 1, titleCosine: 0.1 }), 'a closer title scores higher');

  writeFileSync(join(directory, 'searchgate-model.json'), JSON.stringify({ ...committed, retrieval: { ...older, cosine: undefined } }));
  t.throws(() => readModelDirectory(directory), { message: /"retrieval.cosine" must be a finite number/ }, 'a weight the scorer always had is still required');
});
