/**
 * jina rerank: POST {rerankBaseUrl}/v1/rerank with a Bearer key and JSON {model, query, documents,
 * top_n, return_documents: false}; the reply is {model, usage: {total_tokens}, results: [{index,
 * relevance_score}]}, best first. jina-reranker-v2 scores are the sigmoid of its logit (the model
 * card's compute_score and the API's examples are all in (0, 1)), so the default scale keeps them
 * as they are; jina-reranker-v3 scores are similarities and are clamped at 0 on the same scale.
 */
import { callJson } from '../http.js';
import { jinaClassify, jinaEnvelopeFailure, jinaError } from '../content/jina.js';
import type { JinaOptions } from '../search/jina.js';
import { bearer, endpoint, expectObject, secretsOf } from '../shared.js';
import { scoresByIndex } from './scores.js';
import type { RerankCall, RerankProvider } from '../types.js';

export function createJinaRerank(name: string, options: JinaOptions): RerankProvider {
  const secrets = secretsOf(options);
  return {
    name,
    capabilities: { maxDocuments: options.maxDocuments },
    async rerank(call: RerankCall): Promise<number[]> {
      const reply = await callJson({
        provider: name,
        url: endpoint(options.rerankBaseUrl, '/v1/rerank'),
        headers: bearer(options.apiKey),
        body: {
          model: options.rerankModel,
          query: call.query,
          documents: call.documents,
          top_n: call.documents.length,
          return_documents: false,
        },
        timeoutMs: options.timeoutMs,
        signal: call.signal,
        secrets,
        classify: jinaClassify,
      });
      const failure = jinaEnvelopeFailure(reply);
      if (failure) throw jinaError(name, failure, secrets);
      return scoresByIndex(name, expectObject(name, reply).results, call.documents.length, options.scoreScale);
    },
  };
}
