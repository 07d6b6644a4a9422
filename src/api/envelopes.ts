/**
 * The success bodies of both operations. The web-search envelope is also kept serialized per search
 * outcome, so that a cached replay sends stored bytes with only its own log_id put in.
 */
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

/**
 * A response body already serialized as JSON text: the route sends it as it is. Text, not bytes:
 * node:http encodes a string into the socket's write as it sends the headers, where a Buffer of it
 * would be one more allocation (an ArrayBuffer of its own, past 4 KiB) for every answer.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** One serialized envelope, split where its log_id's JSON string is. */
interface SerializedEnvelope {
  query: string;
  textMode: boolean;
  idBase: string;
  /** Everything after the log_id's quoted string. */
  tail: string;
}

/**
 * One serialization per search outcome, held as long as the outcome is (by the response cache,
 * while the entry lives). A cached outcome is the same object on every hit, and never changed.
 */
const serializedEnvelopes = new WeakMap<SearchOutcome, SerializedEnvelope>();
const ENVELOPE_HEAD = '{"code":200,"log_id":';

/**
 * The text of webSearchEnvelope(logId, request, outcome, idBase), as JSON.stringify gives it. It is
 * kept per outcome and id base (the origin a client reached the gateway at): an answer from the
 * cache is the kept text with its own log_id in place of the first one's, rather than the envelope
 * built and serialized again (5 kB for 10 results: JSON.stringify alone takes ~9 µs on Node 20).
 */
export function webSearchEnvelopeText(logId: string, request: WebSearchRequest, outcome: SearchOutcome, idBase: string): JsonText {
  const textMode = request.text !== null;
  const serialized = serializedEnvelopes.get(outcome);
  if (serialized && serialized.query === request.query && serialized.textMode === textMode && serialized.idBase === idBase) {
    return new JsonText(ENVELOPE_HEAD + JSON.stringify(logId) + serialized.tail);
  }
  const text = JSON.stringify(webSearchEnvelope(logId, request, outcome, idBase));
  if (!text.startsWith(ENVELOPE_HEAD)) throw new Error('webSearchEnvelope no longer starts with code and log_id');
  const tail = text.slice(ENVELOPE_HEAD.length + JSON.stringify(logId).length);
  serializedEnvelopes.set(outcome, { query: request.query, textMode, idBase, tail });
  return new JsonText(text);
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
