/** The success bodies of both operations, built fresh for every response (cached replays included). */
import type { GatewayResult, SearchOutcome } from '../gateway/search.js';
import type { RerankOutcome } from '../gateway/rerank.js';
import type { RerankRequest, WebSearchRequest } from './validate.js';

export function webSearchEnvelope(logId: string, request: WebSearchRequest, outcome: SearchOutcome, idBase: string) {
  // Spec §2.2: in text mode a result has text instead of a snippet (the gateway keeps an upstream's
  // snippet beside the text for the vendor dialects, which show both).
  const results = request.text ? outcome.results.map(({ snippet: _snippet, ...result }) => result) : outcome.results;
  return {
    code: 200,
    log_id: logId,
    msg: null,
    data: {
      _type: 'SearchResponse',
      queryContext: { originalQuery: request.query },
      webPages: {
        webSearchUrl: null,
        totalEstimatedMatches: outcome.totalEstimatedMatches,
        someResultsRemoved: outcome.someResultsRemoved,
        value: results.map((result: GatewayResult, position) => ({ id: `${idBase}#WebPages.${position}`, ...result })),
      },
    },
  };
}

/** The ranked results a rerank answers with: best first, cut to top_n, each document's text when asked. */
export function rerankResults(request: RerankRequest, outcome: RerankOutcome) {
  return outcome.ranking.slice(0, request.topN).map(({ index, score }) => ({
    index,
    relevance_score: score,
    rerankScore: score,
    ...(request.returnDocuments ? { document: { text: request.documents[index]! } } : {}),
  }));
}

/**
 * The rerank body of LangSearch, which is Cohere's v1/v2 body too (../shared/spec/dialects.md §4.1):
 * LangSearch's envelope and rerankScore, and Cohere's `id` and `meta` with the allowance units this
 * request was charged as its billed search units.
 */
export function rerankEnvelope(logId: string, request: RerankRequest, outcome: RerankOutcome, billing: { apiVersion: '1' | '2'; units: number }) {
  return {
    code: 200,
    log_id: logId,
    msg: null,
    id: logId,
    model: outcome.model,
    results: rerankResults(request, outcome),
    meta: { api_version: { version: billing.apiVersion }, billed_units: { search_units: billing.units } },
  };
}
