/**
 * How searchgate calls Tavily: the options of a `tavily` provider (one config block serves search
 * and extract) and the client both operations call through, so that they read errors the same way.
 * Docs: https://docs.tavily.com/documentation/api-reference/endpoint/search and /extract.
 */
import type { UpstreamFailureKind } from '../../providers/errors.js';
import { bearer, markdownToText, providerOptionsSchema, vendorClient, type VendorClient } from '../../providers/shared.js';
import { TAVILY_PAYG_LIMIT_STATUS, TAVILY_PLAN_LIMIT_STATUS } from './wire.js';

export interface TavilyOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** basic (1 credit), advanced (2 credits, best relevance), fast or ultra-fast (lowest latency). */
  searchDepth: 'basic' | 'advanced' | 'fast' | 'ultra-fast';
  /** general, news (real-time news, and the only topic whose results carry a published date) or finance. */
  topic: 'general' | 'news' | 'finance';
  /** Boost results from one country, in Tavily's form: lowercase English name ("united states"); general topic only. */
  country?: string;
  /** Page text as plain "text" or "markdown", for search text mode and Extract alike. */
  textFormat: 'text' | 'markdown';
  /** Extract depth: basic, or advanced (tables and embedded content; twice the credits). */
  extractDepth: 'basic' | 'advanced';
}

export const tavilyOptionsSchema = providerOptionsSchema('tavily', {
  defaultBaseUrl: 'https://api.tavily.com',
  apiKey: 'required',
  properties: {
    searchDepth: { enum: ['basic', 'advanced', 'fast', 'ultra-fast'], default: 'basic' },
    topic: { enum: ['general', 'news', 'finance'], default: 'general' },
    country: { type: 'string', pattern: '^[a-z][a-z ]+$' },
    textFormat: { enum: ['text', 'markdown'], default: 'text' },
    extractDepth: { enum: ['basic', 'advanced'], default: 'basic' },
  },
});

/**
 * Tavily's own statuses (https://help.tavily.com/articles/8645538886-understanding-http-errors):
 * 432 "exceeds your plan's set usage limit" and 433 "exceeds the pay-as-you-go limit" are used-up
 * allowances, not rate limits: no retry helps until the plan or limit changes.
 */
function classifyTavilyFailure(status: number): UpstreamFailureKind | undefined {
  return status === TAVILY_PLAN_LIMIT_STATUS || status === TAVILY_PAYG_LIMIT_STATUS ? 'quota' : undefined;
}

export const tavilyClient = (provider: string, options: TavilyOptions): VendorClient =>
  vendorClient(provider, options, { auth: bearer, classify: classifyTavilyFailure });

/** The raw content to ask for: markdown for a request that wants it, else the configured format. */
export const rawContentFormat = (options: Pick<TavilyOptions, 'textFormat'>, markdown: boolean): TavilyOptions['textFormat'] =>
  markdown ? 'markdown' : options.textFormat;

/** Raw content asked for as markdown: the markdown, and the text in the deployment's own format. */
export function markdownRawContent(raw: string, options: Pick<TavilyOptions, 'textFormat'>): { text: string; markdown: string } {
  return { text: options.textFormat === 'markdown' ? raw : markdownToText(raw), markdown: raw };
}
