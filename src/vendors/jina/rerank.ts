/**
 * jina rerank: POST {rerankBaseUrl}/v1/rerank with a Bearer key and JSON {model, query, documents,
 * top_n, return_documents: false}; the reply is {model, usage: {total_tokens}, results: [{index,
 * relevance_score}]}, best first. jina-reranker-v2 scores are the sigmoid of its logit (the model
 * card's compute_score and the API's examples are all in (0, 1)), so the default scale keeps them
 * as they are; jina-reranker-v3 scores are similarities and are clamped at 0 on the same scale.
 */
import { cohereShapedBody, httpReranker, scoresFromList, usageTokens } from '../../providers/rerank.js';
import { jinaClassify, jinaEnvelopeFailure, type JinaOptions } from './client.js';
import type { RerankProvider } from '../../providers/types.js';
import { JINA_RERANK_PATH, JINA_RERANK_RESULTS, type JinaRerankRequest } from './wire.js';

/** Jina returns each document by default; the scores are all that is read. */
const withoutDocuments: Partial<JinaRerankRequest> = { return_documents: false };

export function createJinaRerank(name: string, options: JinaOptions): RerankProvider {
  return httpReranker(name, { ...options, baseUrl: options.rerankBaseUrl }, {
    path: JINA_RERANK_PATH,
    body: (call) => cohereShapedBody(options.rerankModel, call, withoutDocuments),
    scores: (reply, call) => scoresFromList(name, reply, [JINA_RERANK_RESULTS], call.documents.length, options.scoreScale),
    totalTokens: usageTokens,
    classify: jinaClassify,
    envelope: jinaEnvelopeFailure,
  });
}
