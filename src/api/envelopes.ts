/** The success bodies of both operations, built fresh for every response (cached replays included). */
import type { GatewayResult, SearchOutcome } from '../gateway/search.js';
import type { RerankOutcome } from '../gateway/rerank.js';
import type { RerankRequest } from './validate.js';

export function webSearchEnvelope(logId: string, query: string, outcome: SearchOutcome, idBase: string) {
  return {
    code: 200,
    log_id: logId,
    msg: null,
    data: {
      _type: 'SearchResponse',
      queryContext: { originalQuery: query },
      webPages: {
        webSearchUrl: null,
        totalEstimatedMatches: outcome.totalEstimatedMatches,
        someResultsRemoved: outcome.someResultsRemoved,
        value: outcome.results.map((result: GatewayResult, position) => ({ id: `${idBase}#WebPages.${position}`, ...result })),
      },
    },
  };
}

export function rerankEnvelope(logId: string, request: RerankRequest, outcome: RerankOutcome) {
  return {
    code: 200,
    log_id: logId,
    msg: null,
    model: request.model,
    results: outcome.ranking.slice(0, request.topN).map(({ index, score }) => ({
      index,
      relevance_score: score,
      rerankScore: score,
      ...(request.returnDocuments ? { document: { text: request.documents[index]! } } : {}),
    })),
  };
}
