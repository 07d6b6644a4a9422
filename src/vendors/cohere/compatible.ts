/**
 * cohere-compatible: any server that speaks the Cohere/Jina-shaped rerank API —
 * vLLM (`/rerank`, `/v1/rerank`, `/v2/rerank`), Infinity (`/rerank`), a LiteLLM proxy (`/rerank`,
 * `/v1/rerank`, `/v2/rerank`). POST {model, query, documents, top_n, return_documents: false};
 * the reply is {id?, model, usage?, results: [{index, relevance_score, document?}]} (older
 * Infinity releases called the list `data`).
 *
 * What relevance_score means depends on the server: vLLM applies the model's activation (sigmoid
 * for one-label cross-encoders such as bge-reranker) and Infinity applies a sigmoid unless asked
 * for raw_scores, so both answer probabilities; a server or model that answers raw logits needs
 * scoreScale 'logit'. A LiteLLM proxy passes on whatever its backend answers.
 */
import type { Classify } from '../../providers/http.js';
import { providerOptionsSchema } from '../../providers/shared.js';
import { cohereShapedBody, httpReranker, maxDocumentsSchema, type RerankHttpOptions, type ScoreScale, scoreScaleSchema, scoresFromList } from '../../providers/rerank.js';
import type { ProviderType, RerankProvider } from '../../providers/types.js';
import { COHERE_RERANK_RESULTS, COHERE_RERANK_V1_PATH, type CohereRerankV1Request } from './wire.js';

/** The scores are all that is read: no document texts back. */
const withoutDocuments: Partial<CohereRerankV1Request> = { return_documents: false };

export interface CohereCompatibleOptions extends RerankHttpOptions {
  /** The server's root, e.g. http://vllm:8000. */
  baseUrl: string;
  /** The rerank route under baseUrl: /v1/rerank (vLLM, LiteLLM), /rerank (Infinity), /v2/rerank. */
  path: string;
  /** Model name the server knows; default: the gateway's model id (the key under rerank.models). */
  model?: string;
  /** 'probability' for vLLM, Infinity and Cohere-backed proxies; 'logit' for a server answering raw logits. */
  scoreScale: ScoreScale;
}

/**
 * A 402, or LiteLLM's budget_exceeded error (HTTP 400, 429 in some versions), means
 * the key's budget is spent: no retry helps until an operator raises it.
 */
const classifyCohereCompatible: Classify = (status, rawBody) =>
  status === 402 || /"budget_exceeded"/.test(rawBody) ? 'quota' : undefined;

export function createCohereCompatibleRerank(name: string, options: CohereCompatibleOptions): RerankProvider {
  return httpReranker(name, options, {
    path: options.path,
    body: (call) => cohereShapedBody(options.model ?? call.model, call, withoutDocuments),
    scores: (reply, call) => scoresFromList(name, reply, [COHERE_RERANK_RESULTS, 'data'], call.documents.length, options.scoreScale),
    classify: classifyCohereCompatible,
  });
}

export const cohereCompatibleProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('cohere-compatible', {
    apiKey: 'optional',
    properties: {
      path: { type: 'string', pattern: '^/', default: COHERE_RERANK_V1_PATH },
      model: { type: 'string', minLength: 1 },
      scoreScale: { ...scoreScaleSchema, default: 'probability' },
      maxDocuments: maxDocumentsSchema(1000),
    },
  }),
  rerank: createCohereCompatibleRerank,
};
