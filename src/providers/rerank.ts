/**
 * What the HTTP rerank adapters share (cohere, voyage, tei, cohere-compatible, jina,
 * searchgate-compatible): the call skeleton, the Cohere-shaped request body, the options schema of
 * the batch size, and the reading of replies.
 *
 * Every rerank API answers with a list of (index, score) pairs in some envelope; what differs is
 * where the list sits, what the score field is called, and what the score means. A score that is
 * already a probability is kept as it is; a raw logit goes through the logistic function, which is
 * how cross-encoders with one output define relevance. Never min-max over the batch: that would make
 * the best of ten irrelevant documents look relevant, and scores from two batches incomparable.
 */
import { UpstreamError } from './errors.js';
import type { Classify } from './http.js';
import { bearer, expectObject, vendorClient, type Vendor } from './shared.js';
import type { RerankCall, RerankProvider, RerankScores } from './types.js';

export interface RerankHttpOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  maxDocuments: number;
}

/** What one upstream call for one batch is: where to send what, and how to read the reply. */
interface RerankExchange {
  /** Under options.baseUrl. */
  path: string;
  body(call: RerankCall): unknown;
  /** One score in [0, 1] per document of the batch, in document order. */
  scores(reply: unknown, call: RerankCall): number[];
  /** The tokens the reply says were processed, for vendors that report them. */
  totalTokens?(reply: unknown): number | undefined;
  classify?: Classify;
  envelope?: Vendor['envelope'];
}

/**
 * A rerank provider over HTTP with a Bearer key (when one is configured). The gateway already
 * splits requests into batches of at most maxDocuments, so each call scores one whole batch.
 */
export function httpReranker(name: string, options: RerankHttpOptions, exchange: RerankExchange): RerankProvider {
  const upstream = vendorClient(name, options, { auth: bearer, classify: exchange.classify, envelope: exchange.envelope });
  return {
    name,
    capabilities: { maxDocuments: options.maxDocuments },
    async rerank(call: RerankCall): Promise<RerankScores> {
      const reply = await upstream.json(exchange.path, { body: exchange.body(call), signal: call.signal });
      const totalTokens = exchange.totalTokens?.(reply);
      return { scores: exchange.scores(reply, call), ...(totalTokens === undefined ? {} : { totalTokens }) };
    },
  };
}

/**
 * The Cohere-shaped request body. top_n is every document: the gateway ranks and cuts itself, and
 * needs a score for each document of the batch.
 */
export function cohereShapedBody(model: string, call: RerankCall, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model, query: call.query, documents: call.documents, top_n: call.documents.length, ...extra };
}

export const maxDocumentsSchema = (defaultValue: number, maximum?: number) => ({
  type: 'integer',
  minimum: 1,
  ...(maximum === undefined ? {} : { maximum }),
  default: defaultValue,
});

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

/** `usage.total_tokens` of a reply (Voyage, Jina), when it is a count. */
export function usageTokens(reply: unknown): number | undefined {
  const tokens = (reply as { usage?: { total_tokens?: unknown } } | null)?.usage?.total_tokens;
  return typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0 ? tokens : undefined;
}
