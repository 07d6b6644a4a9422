/**
 * searchgate-compatible rerank: POST {baseUrl}/v1/rerank as LangSearch serves it. Its scores are
 * already calibrated to [0, 1], so they are passed through unchanged (no sigmoid, no batch min-max).
 */
import { searchgateEnvelopeFailure, type SearchgateCompatibleOptions } from './search.js';
import { expectObject } from '../../providers/shared.js';
import { cohereShapedBody, httpReranker, scoresByIndex } from '../../providers/rerank.js';
import type { RerankProvider } from '../../providers/types.js';

export function createSearchgateCompatibleRerank(name: string, options: SearchgateCompatibleOptions): RerankProvider {
  return httpReranker(name, options, {
    path: '/v1/rerank',
    body: (call) => cohereShapedBody(options.rerankModel ?? call.model, call, { return_documents: false }),
    scores: (reply, call) => {
      const envelope = expectObject(name, reply);
      const results = envelope.results ?? (envelope.data as { results?: unknown } | undefined)?.results;
      return scoresByIndex(name, results, call.documents.length, 'probability', ['relevance_score', 'rerankScore']);
    },
    envelope: searchgateEnvelopeFailure,
  });
}
