/**
 * Hugging Face Text Embeddings Inference, self-hosted with a reranker model: POST {baseUrl}/rerank
 * body {query, texts, raw_scores, return_text, truncate}; the reply is a bare array
 * [{index, score}] sorted best first (router/src/http/types.rs and server.rs).
 *
 * With raw_scores false TEI applies the model's activation — a sigmoid for one-label
 * cross-encoders — so scores are probabilities; with rawScores on they are logits and go through
 * the sigmoid here. TEI refuses more texts than its --max-client-batch-size (32 by default), hence
 * maxDocuments 32: the gateway sends larger requests in batches.
 *
 * Errors are {"error": "…", "error_type": "…"}: 400 empty batch, 413 batch too large, 422
 * tokenization, 424 the model or backend failed (an upstream failure, not our request's), 429
 * "Model is overloaded" (no Retry-After), 503 unhealthy. A wrong --api-key is a bare 401.
 */
import type { Classify } from '../../providers/http.js';
import { providerOptionsSchema } from '../../providers/shared.js';
import { httpReranker, maxDocumentsSchema, type RerankHttpOptions, scoresByIndex } from '../../providers/rerank.js';
import type { ProviderType, RerankProvider } from '../../providers/types.js';

export interface TeiOptions extends RerankHttpOptions {
  /** The TEI server, e.g. http://tei:80. */
  baseUrl: string;
  /** TEI's --api-key, when the server was started with one. */
  apiKey?: string;
  /** Keep at or below the server's --max-client-batch-size. */
  maxDocuments: number;
  /** Truncate inputs longer than the model's maximum instead of answering 422. */
  truncate: boolean;
  /** Ask for raw logits (scored here with a sigmoid) instead of TEI's own activation. */
  rawScores: boolean;
}

const classifyTei: Classify = (status) => (status === 424 ? 'unavailable' : undefined);

export function createTeiRerank(name: string, options: TeiOptions): RerankProvider {
  return httpReranker(name, options, {
    path: '/rerank',
    body: (call) => ({ query: call.query, texts: call.documents, raw_scores: options.rawScores, return_text: false, truncate: options.truncate }),
    // A bare array, not an envelope.
    scores: (reply, call) => scoresByIndex(name, reply, call.documents.length, options.rawScores ? 'logit' : 'probability', ['score']),
    classify: classifyTei,
  });
}

export const teiProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('tei', {
    apiKey: 'optional',
    properties: {
      maxDocuments: maxDocumentsSchema(32),
      truncate: { type: 'boolean', default: true },
      rawScores: { type: 'boolean', default: false },
    },
  }),
  rerank: createTeiRerank,
};
