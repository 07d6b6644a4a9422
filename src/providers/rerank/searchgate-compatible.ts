/**
 * searchgate-compatible rerank: POST {baseUrl}/v1/rerank as LangSearch serves it. Its scores are
 * already calibrated to [0, 1], so they are passed through unchanged (no sigmoid, no batch min-max).
 */
import { UpstreamError } from '../errors.js';
import { callJson } from '../http.js';
import {
  authorizationHeaders,
  checkEnvelope,
  endpoint,
  secretsOf,
  type SearchgateCompatibleOptions,
} from '../search/searchgate-compatible.js';
import type { RerankCall, RerankProvider } from '../types.js';

export function createSearchgateCompatibleRerank(name: string, options: SearchgateCompatibleOptions): RerankProvider {
  return {
    name,
    capabilities: { maxDocuments: options.maxDocuments },
    async rerank(call: RerankCall): Promise<number[]> {
      const body = await callJson({
        provider: name,
        url: endpoint(options.baseUrl, '/v1/rerank'),
        headers: authorizationHeaders(options.apiKey),
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
      if (!Array.isArray(results)) throw new UpstreamError(name, 'garbage', 'reply has no results array');
      const scores = new Array<number>(call.documents.length).fill(Number.NaN);
      for (const item of results as Array<Record<string, unknown>>) {
        const index = item?.index;
        const score = item?.relevance_score ?? item?.rerankScore;
        if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= scores.length) {
          throw new UpstreamError(name, 'garbage', 'reply has a result with an invalid index');
        }
        if (typeof score !== 'number' || !Number.isFinite(score)) {
          throw new UpstreamError(name, 'garbage', 'reply has a result without a numeric score');
        }
        scores[index] = Math.min(1, Math.max(0, score));
      }
      if (scores.some(Number.isNaN)) throw new UpstreamError(name, 'garbage', 'reply does not score every document');
      return scores;
    },
  };
}
