/**
 * Reranker quality on a BEIR collection, shared by `searchgate calibrate` and the rerank-quality
 * benchmark: BM25 candidates from a local index built from the corpus, each query's candidates
 * scored by the model as one job (the lexical half of the raw score takes its statistics from the
 * job, so the set must be the one the service would see), then nDCG@10 and calibration fits over
 * the scored pairs. Unjudged candidates count as not relevant: they are the hard negatives a
 * calibration must learn from.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLocalIndex } from '../local/index/index.js';
import { calibrate, fitIsotonic, fitPlatt, reliabilityTable } from '../local/rerank/calibration.js';
import type { Calibration, ReliabilityBand } from '../local/rerank/calibration.js';
import type { JobScores } from '../local/rerank/scoring.js';
import type { ModelFamily } from '../local/rerank/model.js';
import { indexCorpus, ndcgAtCutoff, rerankText, searchDocumentIds } from './beir.js';
import type { BeirDocument, BeirQuery, Qrels } from './beir.js';

export type CalibrationMethod = Calibration['method'];

/** What scores a query's candidates: the engine (NeuralReranker), as the service runs it. */
export interface RawScorer {
  scoreRaw(query: string, documents: readonly string[]): Promise<JobScores>;
}

export const CALIBRATION_FITS: Record<CalibrationMethod, (raw: readonly number[], labels: readonly number[]) => Calibration> = {
  platt: fitPlatt,
  isotonic: fitIsotonic,
};

export interface ScoredQuery {
  queryId: string;
  /** BM25 candidates, best first. */
  candidateIds: string[];
  semantic: number[];
  lexical: number[];
  judged: ReadonlyMap<string, number>;
}

/** The queries that have judgements, in file order, at most `maxQueries` of them. */
export function judgedQueries(queries: readonly BeirQuery[], qrels: Qrels, maxQueries = Number.POSITIVE_INFINITY): BeirQuery[] {
  return queries.filter((query) => qrels.has(query._id)).slice(0, maxQueries);
}

const PROGRESS_INTERVAL_MS = 10_000;

/**
 * Builds a throwaway index of the corpus, takes each query's top `candidates` BM25 hits and scores
 * them with the model, one job per query. Reports progress through `progress` about every 10 s.
 */
export async function scoreBm25Candidates(options: {
  corpus: readonly BeirDocument[];
  queries: readonly BeirQuery[];
  qrels: Qrels;
  candidates: number;
  scorer: RawScorer;
  progress: (line: string) => void;
}): Promise<ScoredQuery[]> {
  const { corpus, queries, qrels, candidates, scorer, progress } = options;
  const documents = new Map(corpus.map((document) => [document._id, document]));
  const indexDirectory = mkdtempSync(join(tmpdir(), 'searchgate-rerank-eval-'));
  const index = await openLocalIndex(indexDirectory);
  try {
    progress(`indexing ${corpus.length} documents`);
    await indexCorpus(index, corpus);
    const scored: ScoredQuery[] = [];
    const started = performance.now();
    let lastReport = started;
    for (const query of queries) {
      const candidateIds = await searchDocumentIds(index, query.text, candidates);
      const scores = await scorer.scoreRaw(query.text, candidateIds.map((id) => rerankText(documents.get(id)!)));
      scored.push({ queryId: query._id, candidateIds, semantic: scores.semantic, lexical: scores.lexical, judged: qrels.get(query._id) ?? new Map() });
      const now = performance.now();
      if (now - lastReport >= PROGRESS_INTERVAL_MS || scored.length === queries.length) {
        lastReport = now;
        const secondsPerQuery = (now - started) / 1000 / scored.length;
        const left = Math.round(secondsPerQuery * (queries.length - scored.length));
        progress(`scored ${scored.length}/${queries.length} queries (${secondsPerQuery.toFixed(2)} s per query, about ${left} s left)`);
      }
    }
    return scored;
  } finally {
    await index.close();
    rmSync(indexDirectory, { recursive: true, force: true });
  }
}

export function rawScores(query: ScoredQuery, lexicalWeight: number): number[] {
  return query.semantic.map((semantic, i) => semantic + lexicalWeight * query.lexical[i]!);
}

/** Mean nDCG@10 of the candidates reranked by raw score; `null` keeps the BM25 order. */
export function meanNdcg(scored: readonly ScoredQuery[], lexicalWeight: number | null): number {
  if (scored.length === 0) return 0;
  let sum = 0;
  for (const query of scored) {
    let ranked = query.candidateIds;
    if (lexicalWeight !== null) {
      const raw = rawScores(query, lexicalWeight);
      // Stable on ties, so equal model scores keep their BM25 order.
      ranked = query.candidateIds.map((id, i) => ({ id, raw: raw[i]!, i })).sort((a, b) => b.raw - a.raw || a.i - b.i).map((entry) => entry.id);
    }
    sum += ndcgAtCutoff(ranked, query.judged);
  }
  return sum / scored.length;
}

export interface WeightSweep {
  best: { lexicalWeight: number; ndcgAt10: number };
  sweep: { lexicalWeight: number; ndcgAt10: number }[];
}

/** nDCG@10 at each weight; the best is the first highest, so ties prefer the smaller weight. */
export function sweepLexicalWeights(scored: readonly ScoredQuery[], weights: readonly number[]): WeightSweep {
  const sweep = weights.map((lexicalWeight) => ({ lexicalWeight, ndcgAt10: meanNdcg(scored, lexicalWeight) }));
  const best = sweep.reduce((best, entry) => (entry.ndcgAt10 > best.ndcgAt10 ? entry : best));
  return { best, sweep };
}

export interface LabelledPairs {
  raw: number[];
  /** 1 when the qrels judge the pair relevant, else 0 (unjudged included). */
  labels: number[];
  /** Which scored query each pair came from, for folds that keep a query's pairs together. */
  queryIndexes: number[];
}

export function labelledPairs(scored: readonly ScoredQuery[], lexicalWeight: number): LabelledPairs {
  const pairs: LabelledPairs = { raw: [], labels: [], queryIndexes: [] };
  scored.forEach((query, queryIndex) => {
    const raw = rawScores(query, lexicalWeight);
    query.candidateIds.forEach((id, i) => {
      pairs.raw.push(raw[i]!);
      pairs.labels.push((query.judged.get(id) ?? 0) > 0 ? 1 : 0);
      pairs.queryIndexes.push(queryIndex);
    });
  });
  return pairs;
}

const HELD_OUT_FOLDS = 5;

/**
 * Each pair's calibrated score from a fit that did not see its query (5 folds by query). An
 * in-sample table flatters isotonic regression, which can follow the labels it is scored on step
 * by step; the held-out one shows what a new query would get. Null when some fold's training part
 * has no relevant or no non-relevant pair (too few queries).
 */
export function heldOutScores(pairs: LabelledPairs, method: CalibrationMethod, family: ModelFamily): number[] | null {
  const queryCount = Math.max(0, ...pairs.queryIndexes) + 1;
  const folds = Math.min(HELD_OUT_FOLDS, queryCount);
  if (folds < 2) return null;
  const scores = new Array<number>(pairs.raw.length);
  for (let fold = 0; fold < folds; fold++) {
    const inFold = (i: number) => pairs.queryIndexes[i]! % folds === fold;
    const training = pairs.raw.map((_, i) => i).filter((i) => !inFold(i));
    let calibration: Calibration;
    try {
      calibration = CALIBRATION_FITS[method](
        training.map((i) => pairs.raw[i]!),
        training.map((i) => pairs.labels[i]!),
      );
    } catch {
      return null;
    }
    pairs.raw.forEach((raw, i) => {
      if (inFold(i)) scores[i] = calibrate(calibration, raw, family);
    });
  }
  return scores;
}

export interface MethodReport {
  method: CalibrationMethod;
  /** Fitted on every pair: what gets written. */
  calibration: Calibration;
  reliability: ReliabilityBand[];
  /** Whether `reliability` comes from held-out folds or, with too few queries, from the fit's own pairs. */
  reliabilityOf: 'held-out folds' | 'fitted pairs';
  meetsGoal: boolean;
}

/** Fits the method on all pairs and measures its reliability, held out when there are enough queries. */
export function fitAndMeasure(pairs: LabelledPairs, method: CalibrationMethod, family: ModelFamily): MethodReport {
  const calibration = CALIBRATION_FITS[method](pairs.raw, pairs.labels);
  const heldOut = heldOutScores(pairs, method, family);
  const scores = heldOut ?? pairs.raw.map((raw) => calibrate(calibration, raw, family));
  const reliability = reliabilityTable(scores, pairs.labels);
  return { method, calibration, reliability, reliabilityOf: heldOut ? 'held-out folds' : 'fitted pairs', meetsGoal: meetsReliabilityGoal(reliability) };
}

/** The service's promise (spec §2.4): of pairs scored ≥ 0.75 at least 75% relevant, of those < 0.1 at most 10%. */
export const RELIABILITY_GOAL = { highBandMinimumShare: 0.75, lowBandMaximumShare: 0.1 } as const;

export function meetsReliabilityGoal(table: readonly ReliabilityBand[]): boolean {
  const low = table.find((band) => band.high === 0.1)!;
  const high = table.find((band) => band.low === 0.75)!;
  // An empty top band would "meet" the goal by never saying anything is relevant; that is a failure.
  if (high.count === 0 || high.shareRelevant! < RELIABILITY_GOAL.highBandMinimumShare) return false;
  return low.count === 0 || low.shareRelevant! <= RELIABILITY_GOAL.lowBandMaximumShare;
}

export function formatReliabilityTable(table: readonly ReliabilityBand[]): string {
  const rows = table.map((band) =>
    [band.band.padEnd(12), String(band.count).padStart(7), String(band.relevant).padStart(9), band.shareRelevant === null ? '      –' : `${(band.shareRelevant * 100).toFixed(1).padStart(6)}%`].join('  '),
  );
  return [`${'band'.padEnd(12)}  ${'pairs'.padStart(7)}  ${'relevant'.padStart(9)}  ${'share'.padStart(7)}`, ...rows].join('\n');
}

export function standardDeviation(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length);
}
