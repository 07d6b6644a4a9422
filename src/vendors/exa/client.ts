/**
 * How searchgate calls Exa: the options of an `exa` provider (one config block serves search and
 * contents) and the client both operations call through, so that they read errors the same way.
 * Docs: https://exa.ai/docs/reference/search, https://exa.ai/docs/reference/get-contents,
 * exa-labs/openapi-spec exa-openapi-spec.yaml, exa-labs/exa-js src/index.ts.
 */
import type { UpstreamFailureKind } from '../../providers/errors.js';
import { providerOptionsSchema, vendorClient, type VendorClient } from '../../providers/shared.js';
import { EXA_KEY_HEADER, EXA_PAYMENT_REQUIRED_STATUS } from './wire.js';

export interface ExaOptions {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Exa's search type: "auto" (Exa picks), "fast" or "instant" for latency, "neural", or the costlier deep variants. */
  searchType: string;
  /** Most results one call asks for: 100 on standard plans, more on custom plans. */
  maxResults: number;
  /** Restrict to one Exa category ("news", "research paper", "company"…); unset searches the whole web. */
  category?: string;
  /** Two-letter ISO country of the searcher (userLocation), to favour regional results. */
  userLocation?: string;
  /** Length of the highlights Exa returns as each result's snippet; Exa advises not going below about 400. */
  snippetMaxCharacters: number;
  /** Serve `summary: true` from Exa's per-result LLM summary (billed per result, slower) instead of letting the gateway derive one. */
  nativeSummary: boolean;
}

export const exaOptionsSchema = providerOptionsSchema('exa', {
  defaultBaseUrl: 'https://api.exa.ai',
  apiKey: 'required',
  properties: {
    searchType: { enum: ['auto', 'fast', 'instant', 'neural', 'deep-lite', 'deep', 'deep-reasoning'], default: 'auto' },
    maxResults: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
    category: { type: 'string', minLength: 1 },
    userLocation: { type: 'string', pattern: '^[A-Za-z]{2}$' },
    snippetMaxCharacters: { type: 'integer', minimum: 50, maximum: 10_000, default: 500 },
    nativeSummary: { type: 'boolean', default: false },
  },
});

/**
 * Exa's 402 means the account's credits or the key's budget are spent (tags NO_MORE_CREDITS,
 * API_KEY_BUDGET_EXCEEDED, https://exa.ai/docs/reference/error-codes): no retry helps for a while.
 */
function classifyExaFailure(status: number): UpstreamFailureKind | undefined {
  return status === EXA_PAYMENT_REQUIRED_STATUS ? 'quota' : undefined;
}

export const exaClient = (provider: string, options: ExaOptions): VendorClient =>
  vendorClient(provider, options, { auth: (apiKey) => ({ [EXA_KEY_HEADER]: apiKey }), classify: classifyExaFailure });

