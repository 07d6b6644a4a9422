/**
 * searchgate-compatible rerank: POST {baseUrl}/v1/rerank as LangSearch serves it. Its scores are
 * already calibrated to [0, 1], so they are passed through unchanged (no sigmoid, no batch min-max).
 */
import { callJson } from '../http.js';
import { checkEnvelope, type SearchgateCompatibleOptions } from '../search/searchgate-compatible.js';
import { bearer, endpoint, secretsOf } from '../shared.js';
import { scoresByIndex } from './scores.js';
import type { RerankCall, RerankProvider } from '../types.js';

export function createSearchgateCompatibleRerank(name: string, options: SearchgateCompatibleOptions): RerankProvider {
  return {
    name,
    capabilities: { maxDocuments: options.maxDocuments },
    async rerank(call: RerankCall): Promise<number[]> {
      const body = await callJson({
        provider: name,
        url: endpoint(options.baseUrl, '/v1/rerank'),
        headers: bearer(options.apiKey),
        body: {
          model: options.rerankModel ?? call.model,
          query: call.query,
          documents: call.documents,
          top_n: call.documents.length,
          return_documents: false,
        },
        timeoutMs: options.timeoutMs,
        signal: call.signal,
        secrets: secretsOf(options),
      });
      const envelope = checkEnvelope(name, body, secretsOf(options));
      const results = envelope.results ?? (envelope.data as { results?: unknown } | undefined)?.results;
      return scoresByIndex(name, results, call.documents.length, 'probability', ['relevance_score', 'rerankScore']);
    },
  };
}
