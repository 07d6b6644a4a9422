/**
 * Reading rerank replies. Every rerank API answers with a list of (index, score) pairs in some
 * envelope; what differs is where the list sits, what the score field is called, and what the score
 * means. A score that is already a probability is kept as it is; a raw logit goes through the
 * logistic function, which is how cross-encoders with one output define relevance. Never min-max
 * over the batch: that would make the best of ten irrelevant documents look relevant, and scores
 * from two batches incomparable.
 */
import { UpstreamError } from '../errors.js';
import { expectObject } from '../shared.js';

/** What a model's scores are: calibrated probabilities in [0, 1], or raw logits. */
export type ScoreScale = 'probability' | 'logit';

export const scoreScaleSchema = { enum: ['probability', 'logit'] } as const;

export const sigmoid = (logit: number): number => 1 / (1 + Math.exp(-logit));

/** A score in [0, 1]; probabilities only need clamping against float noise. */
function normalizeScore(score: number, scale: ScoreScale): number {
  const value = scale === 'logit' ? sigmoid(score) : score;
  return Math.min(1, Math.max(0, value));
}

/**
 * One score per document in document order, from a reply's list of results. Every document must be
 * scored exactly once; anything else is a reply we cannot trust (`garbage`).
 */
export function scoresByIndex(
  provider: string,
  results: unknown,
  documentCount: number,
  scale: ScoreScale,
  /** Where the score is, first present wins: LangSearch's older replies say rerankScore. */
  scoreFields: readonly string[] = ['relevance_score'],
): number[] {
  if (!Array.isArray(results)) throw new UpstreamError(provider, 'garbage', 'reply has no results array');
  const scores = new Array<number>(documentCount).fill(Number.NaN);
  for (const item of results as Array<Record<string, unknown> | null>) {
    const index = item?.index;
    const score = scoreFields.map((field) => item?.[field]).find((value) => value !== undefined);
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= documentCount) {
      throw new UpstreamError(provider, 'garbage', 'reply has a result with an invalid index');
    }
    if (typeof score !== 'number' || !Number.isFinite(score)) {
      throw new UpstreamError(provider, 'garbage', `reply has a result without a numeric ${scoreFields.join(' or ')}`);
    }
    scores[index] = normalizeScore(score, scale);
  }
  if (scores.some(Number.isNaN)) throw new UpstreamError(provider, 'garbage', 'reply does not score every document');
  return scores;
}

/** Scores from a reply object whose list of {index, <score>} sits under one of `listFields`. */
export function scoresFromList(
  provider: string,
  reply: unknown,
  listFields: readonly string[],
  documentCount: number,
  scale: ScoreScale,
  scoreFields: readonly string[] = ['relevance_score'],
): number[] {
  const envelope = expectObject(provider, reply);
  const field = listFields.find((candidate) => Array.isArray(envelope[candidate]));
  if (field === undefined) throw new UpstreamError(provider, 'garbage', `reply has no ${listFields.join(' or ')} array`);
  return scoresByIndex(provider, envelope[field], documentCount, scale, scoreFields);
}
