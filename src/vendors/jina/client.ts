/**
 * How searchgate calls Jina AI: one account serving three operations, each on its own host — web
 * search (s.jina.ai, search.ts), page content (the Reader, r.jina.ai, reader.ts) and rerank
 * (api.jina.ai/v1/rerank, rerank.ts). One config block, one API key, a base URL per host; one
 * client and one reading of Jina's errors for all three.
 */
import type { UpstreamFailureKind } from '../../providers/errors.js';
import { scoreScaleSchema, type ScoreScale } from '../../providers/rerank.js';
import { bearer, markdownToText, vendorClient, type EnvelopeFailure, type VendorClient } from '../../providers/shared.js';

export interface JinaOptions {
  apiKey?: string;
  timeoutMs: number;
  /** s.jina.ai, or eu.s.jina.ai to keep processing in the EU. */
  searchBaseUrl: string;
  /** r.jina.ai, or eu.r.jina.ai. */
  readerBaseUrl: string;
  /** api.jina.ai (the rerank path /v1/rerank is appended). */
  rerankBaseUrl: string;
  /** Default result language (BCP 47) when the request names none; sent as hl. */
  language?: string;
  /** Two-letter country the search should appear to come from (gl). */
  country?: string;
  /**
   * What page text is: 'content' (Jina's default: the main content as Markdown; we ask for links
   * reduced to their anchor text and images dropped) or 'text' (document.body.innerText, which
   * keeps navigation and footers).
   */
  readerFormat: 'content' | 'text';
  /** The Jina model every rerank call uses; the gateway's model id is only our local name for it. */
  rerankModel: string;
  /** jina-reranker-v2 answers sigmoid probabilities; 'logit' for a model that answers raw scores. */
  scoreScale: ScoreScale;
  /** Documents per rerank call; larger requests are split by the gateway. */
  maxDocuments: number;
}

const url = { type: 'string', pattern: '^https?://' } as const;

export const jinaOptionsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    type: { const: 'jina' },
    // Optional: the Reader answers without a key (at a lower rate); search and rerank need one.
    apiKey: { type: 'string', minLength: 1 },
    timeoutMs: { type: 'integer', minimum: 1, default: 15_000 },
    searchBaseUrl: { ...url, default: 'https://s.jina.ai' },
    readerBaseUrl: { ...url, default: 'https://r.jina.ai' },
    rerankBaseUrl: { ...url, default: 'https://api.jina.ai' },
    language: { type: 'string', minLength: 2 },
    country: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    readerFormat: { enum: ['content', 'text'], default: 'content' },
    rerankModel: { type: 'string', minLength: 1, default: 'jina-reranker-v2-base-multilingual' },
    scoreScale: { ...scoreScaleSchema, default: 'probability' },
    maxDocuments: { type: 'integer', minimum: 1, default: 1000 },
  },
} as const;

/** Where Jina's statuses differ from HTTP's defaults: 402 is a used-up balance (InsufficientBalanceError, InsufficientCreditsError). */
export const jinaClassify = (status: number): UpstreamFailureKind | undefined => (status === 402 ? 'quota' : undefined);

/**
 * Jina's error envelope, {data: null, code: <HTTP status>, name, status, message, retryAfter?}, in a
 * body answered with a 2xx status. Its hosts normally send the envelope's code as the HTTP status
 * too, but clients have met it inside a 200; reading it as content or as no results would hide a
 * used-up balance or a bad key.
 */
export function jinaEnvelopeFailure({ code, data, name, message, retryAfter }: Record<string, unknown>): EnvelopeFailure | null {
  if (typeof code !== 'number' || code < 400 || (data !== null && data !== undefined)) return null;
  return {
    code,
    detail: `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : ''}`,
    ...(typeof retryAfter === 'number' ? { retryAfterMs: retryAfter * 1000 } : {}),
  };
}

/** Calls to one of Jina's hosts (search, Reader, rerank), all with the account's one key. */
export const jinaClient = (provider: string, options: JinaOptions, baseUrl: string): VendorClient =>
  vendorClient(
    provider,
    { baseUrl, apiKey: options.apiKey, timeoutMs: options.timeoutMs },
    { auth: bearer, classify: jinaClassify, envelope: jinaEnvelopeFailure },
  );

/**
 * How page text is asked for. 'content' is the Reader's default (Readability's main content as
 * Markdown): links become their anchor text and images are dropped, since their URLs would eat a
 * client's max_characters. 'text' is document.body.innerText.
 */
export function readerHeaders(options: Pick<JinaOptions, 'readerFormat'>): Record<string, string> {
  return options.readerFormat === 'text'
    ? { 'x-return-format': 'text' }
    : { 'x-md-link-style': 'discarded', 'x-retain-images': 'none' };
}

/** The format to read: Jina's markdown `content` for a request that wants markdown, else the configured one. */
export const readerFormatFor = (options: Pick<JinaOptions, 'readerFormat'>, markdown: boolean): JinaOptions['readerFormat'] =>
  markdown ? 'content' : options.readerFormat;

/** Markdown content read for a request that wants it: the markdown, and the text in the deployment's own format. */
export function markdownContent(markdown: string, options: Pick<JinaOptions, 'readerFormat'>): { text: string; markdown: string } {
  return { text: options.readerFormat === 'text' ? markdownToText(markdown) : markdown, markdown };
}
