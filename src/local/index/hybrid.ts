/**
 * Hybrid retrieval over the local index (issue 17): full-text (BM25) candidates and vector (ANN)
 * candidates, the query's filters applied to both legs inside the index, fused and scored by one
 * calibrated model from features of each candidate. The stored vectors make the semantic feature:
 * no page passes through the model at query time, only the query.
 *
 * The score is a logistic model, P(relevant | features), fitted by `searchgate calibrate` on
 * SciFact's training claims (topical relevance) and on known-item queries (a page's exact title),
 * so that both kinds of query are served by one ranking rather than by rules for either:
 *
 * - cosine: the query's best cosine over the page's windows;
 * - lexical: BM25 of the query against the candidates' title and opening text, with statistics from
 *   the candidates (as the reranker's lexical half);
 * - titleCoverage: the share of the query's stems found in the title; exactTitle: the query is the
 *   title (case, punctuation and spacing aside);
 * - bm25Rank, vectorRank: reciprocal ranks in each leg, 1 / (60 + rank), 0 when absent (RRF's terms);
 * - fullTextScore: the page's BM25 score over the whole index, as a share of the query's best (a
 *   page only the vector leg found gets the leg's lowest): how far a page trails the best lexical
 *   match, which ranks alone cannot say (a score-based convex fusion, as Bruch et al. compare with
 *   RRF);
 * - titleCosine: the query's cosine with the page's title embedded alone (its first window's cosine
 *   for a page without one: no title, or written before title vectors). A title is what a page
 *   claims to be about, which the first window dilutes with its opening text.
 *
 * An index without vectors of the query's model (built before vectors, or by another model) is
 * served by BM25 alone, and says so once.
 */
import { inRequestBm25 } from '../rerank/lexical.js';
import { RETRIEVAL_FEATURES, type RetrievalWeights } from '../rerank/model.js';
import type { IndexHit, IndexQuery, LocalIndex } from '../types.js';
import type { QueryEmbedder } from './embedder.js';
import { queryStems } from './terms.js';

/** A candidate's features: one per weight of the scorer. */
export type HybridFeatures = Omit<RetrievalWeights, 'intercept'>;

export const HYBRID_FEATURES = RETRIEVAL_FEATURES;

export type HybridFeature = (typeof HYBRID_FEATURES)[number];

/** The logistic model's coefficients: relevance = sigmoid(intercept + Σ weight × feature). */
export type HybridWeights = RetrievalWeights;

/**
 * Until a model's own weights are fitted: cosine carries the meaning, an exact title is a strong
 * sign, and each leg's rank votes as in reciprocal rank fusion (a 1 / (60 + rank) of 0.016 times 150
 * is 2.5 logits at rank 1).
 */
export const DEFAULT_HYBRID_WEIGHTS: HybridWeights = {
  intercept: -6,
  cosine: 6,
  lexical: 0.1,
  titleCoverage: 1,
  exactTitle: 3,
  bm25Rank: 150,
  vectorRank: 150,
  fullTextScore: 1,
  titleCosine: 0,
};

/** The model's fitted weights where its spec has them, else the defaults. */
export function retrievalWeights(fitted: HybridWeights | undefined | null): HybridWeights {
  return fitted ?? DEFAULT_HYBRID_WEIGHTS;
}

export interface HybridOptions {
  weights: HybridWeights;
  /** Candidates taken from each leg. */
  candidates: number;
  embedder: QueryEmbedder | null;
  /** Said once per index when the index cannot serve vectors to this embedder. */
  onFullTextOnly?(reason: string): void;
}

export interface ScoredHit extends IndexHit {
  /** P(relevant) under the calibrated model; null when the ranking is BM25's alone. */
  relevance: number | null;
}

/** Reciprocal rank with RRF's damping constant: the leg's vote for a candidate. */
const RRF_K = 60;
/**
 * How much of a page's text the lexical feature reads: its title and opening, like the first window
 * (UTF-16 units: a word cut in two at the end weighs nothing here).
 */
const LEXICAL_TEXT_CHARACTERS = 2000;

export async function hybridSearch(index: LocalIndex, query: IndexQuery, options: HybridOptions): Promise<{ hits: ScoredHit[]; total: number | null }> {
  const depth = Math.max(options.candidates, query.offset + query.limit);
  const found = await hybridCandidates(index, query, options.embedder, depth);
  if ('fullTextOnly' in found) {
    options.onFullTextOnly?.(found.fullTextOnly);
    const { hits, total } = await index.search(query);
    return { hits: hits.map((hit) => ({ ...hit, relevance: null })), total };
  }
  const scored = found.candidates
    .map(({ hit, bm25Rank }, i) => ({ hit: { ...hit, relevance: relevance(options.weights, found.features[i]!) }, bm25Rank }))
    .sort((a, b) => b.hit.relevance - a.hit.relevance || a.bm25Rank - b.bm25Rank)
    .map(({ hit }) => hit);
  return {
    hits: scored.slice(query.offset, query.offset + query.limit).map((hit) => ({ ...hit, snippet: index.snippet(hit.page.text, query.query) })),
    total: found.exhaustive ? scored.length : found.fullTextTotal,
  };
}

export interface HybridCandidates {
  /** Each page of either leg once, with its ranks there. */
  candidates: Candidate[];
  /** The scorer's features of each candidate, in candidate order. */
  features: HybridFeatures[];
  fullTextTotal: number | null;
  /** Neither leg was cut at the depth: the candidates are every match. */
  exhaustive: boolean;
}

/**
 * Both legs' top `depth` pages for the query, under its filters, with their features: what the
 * scorer ranks, and what `searchgate calibrate --retrieval` fits it on. `fullTextOnly` says why the
 * vectors cannot serve this query.
 */
export async function hybridCandidates(
  index: LocalIndex,
  query: IndexQuery,
  embedder: QueryEmbedder | null,
  depth: number,
): Promise<HybridCandidates | { fullTextOnly: string }> {
  const reason = await fullTextOnlyReason(index, embedder);
  if (reason) return { fullTextOnly: reason };
  const { model, reads } = embedder!;
  // Snippets are made for the results alone, once they are chosen.
  const leg = { ...query, offset: 0, limit: depth, snippets: false };
  const [fullText, vector] = await Promise.all([
    index.search({ ...leg, withVectors: true }),
    embedder!.embedQuery(query.query).then((queryVector) => index.vectorSearch({ ...leg, vector: queryVector, models: reads }).then((hits) => ({ hits, queryVector }))),
  ]);
  const candidates = fuse(fullText.hits, vector.hits);
  // A page written before vectors (or by another model) cannot be scored with the others: until the
  // index is re-embedded, such a query keeps BM25's order.
  if (candidates.some(({ hit }) => !hit.vectors || !reads.includes(hit.vectors.model))) {
    return { fullTextOnly: `some pages have no vectors of ${model}; run \`searchgate index add --reembed\`` };
  }
  return {
    candidates,
    features: featuresOf(query.query, vector.queryVector, candidates),
    fullTextTotal: fullText.total,
    exhaustive: fullText.hits.length < depth && vector.hits.length < depth,
  };
}

/** Why vectors cannot serve this search, or null when they can. */
async function fullTextOnlyReason(index: LocalIndex, embedder: QueryEmbedder | null): Promise<string | null> {
  if (!embedder) return 'no embedding model is loaded';
  if (index.vectorDimensions !== embedder.dimensions) await index.refreshVectorDimensions();
  if (index.vectorDimensions === null) return 'the index holds no vectors (built before them); add them with `searchgate index add --reembed`';
  if (index.vectorDimensions !== embedder.dimensions) {
    return `the index holds ${index.vectorDimensions}-wide vectors, the model makes ${embedder.dimensions}-wide ones; run \`searchgate index add --reembed\``;
  }
  return null;
}

export interface Candidate {
  hit: IndexHit;
  bm25Rank: number;
  vectorRank: number;
}

/** Both legs' hits, each page once, with its rank in each leg (Infinity where it is absent). */
export function fuse(fullText: readonly IndexHit[], vector: readonly IndexHit[]): Candidate[] {
  const byPage = new Map<string, Candidate>();
  fullText.forEach((hit, rank) => byPage.set(hit.page.canonicalUrl, { hit, bm25Rank: rank + 1, vectorRank: Infinity }));
  vector.forEach((hit, rank) => {
    const known = byPage.get(hit.page.canonicalUrl);
    if (known) known.vectorRank = rank + 1;
    else byPage.set(hit.page.canonicalUrl, { hit, bm25Rank: Infinity, vectorRank: rank + 1 });
  });
  return [...byPage.values()];
}

/** The features of each candidate for one query, in candidate order. */
export function featuresOf(query: string, queryVector: Float32Array, candidates: readonly Candidate[]): HybridFeatures[] {
  const stems = queryStems(query);
  const wanted = normalizedTitle(query);
  const lexical = inRequestBm25(
    query,
    candidates.map(({ hit }) => `${hit.page.title}\n${hit.page.text.slice(0, LEXICAL_TEXT_CHARACTERS)}`),
  );
  const fullTextScore = relativeFullTextScores(candidates);
  return candidates.map(({ hit, bm25Rank, vectorRank }, i) => {
    const titleStems = new Set(queryStems(hit.page.title));
    const cosine = bestCosine(queryVector, hit.vectors!.windows);
    const title = hit.vectors!.title;
    return {
      cosine,
      lexical: lexical[i]!,
      titleCoverage: stems.length === 0 ? 0 : stems.filter((stem) => titleStems.has(stem)).length / stems.length,
      exactTitle: wanted !== '' && normalizedTitle(hit.page.title) === wanted ? 1 : 0,
      bm25Rank: Number.isFinite(bm25Rank) ? 1 / (RRF_K + bm25Rank) : 0,
      vectorRank: Number.isFinite(vectorRank) ? 1 / (RRF_K + vectorRank) : 0,
      fullTextScore: fullTextScore[i]!,
      titleCosine: title ? bestCosine(queryVector, [title]) : cosine,
    };
  });
}

/**
 * Each candidate's BM25 score as a share of the best one. A candidate of the vector leg alone scored
 * at most the full-text leg's last (it was not in that leg's top), so it gets that share; with no
 * full-text hit at all, every share is 0.
 */
function relativeFullTextScores(candidates: readonly Candidate[]): number[] {
  let best = 0;
  let lowest = Infinity;
  for (const { hit, bm25Rank } of candidates) {
    if (!Number.isFinite(bm25Rank)) continue;
    best = Math.max(best, hit.score);
    lowest = Math.min(lowest, hit.score);
  }
  if (!(best > 0)) return candidates.map(() => 0);
  return candidates.map(({ hit, bm25Rank }) => (Number.isFinite(bm25Rank) ? hit.score : lowest) / best);
}

export function relevance(weights: HybridWeights, features: HybridFeatures): number {
  let logit = weights.intercept;
  for (const name of HYBRID_FEATURES) logit += weights[name] * features[name];
  return 1 / (1 + Math.exp(-logit));
}

/** Vectors are unit length (the embedder normalizes), so the dot product is the cosine. */
function bestCosine(query: Float32Array, windows: readonly Float32Array[]): number {
  let best = -1;
  for (const window of windows) {
    let dot = 0;
    for (let d = 0; d < query.length; d++) dot += query[d]! * window[d]!;
    if (dot > best) best = dot;
  }
  return best;
}

/** Lower case, letters and digits only, single spaces: "Python 3.11 — Tutorial" and "python 3 11 tutorial" match. */
function normalizedTitle(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
}
