/**
 * The three kinds of upstream. Each provider is a small module that turns our request into its
 * upstream's request and the reply back into these shapes, and says what it can do natively; the
 * gateway (src/gateway) supplies the rest.
 */
import type { MirrorStatus } from '../local/index/mirror.js';
import type { Freshness } from '../api/freshness.js';
import type { TextMode } from '../api/validate.js';
import type { Logger } from '../server/logger.js';
import type { ModelTelemetry } from '../server/metrics.js';

export interface SearchCapabilities {
  /** Most results one upstream call may return. */
  maxPageSize: number;
  /** Whether the upstream takes an offset, so the gateway can ask for further pages. */
  pagination: boolean;
  /** Which freshness values the upstream filters on itself. */
  freshness: 'none' | 'presets' | 'all';
  includeDomains: boolean;
  excludeDomains: boolean;
  /** Whether the upstream returns full page text when asked. */
  text: boolean;
}

export interface SearchCall {
  query: string;
  /** Results wanted from this call: at most capabilities.maxPageSize. */
  count: number;
  /** Results the gateway already has from earlier calls for this request. */
  offset: number;
  /** 0 for the first call of a request, 1 for the next…: for upstreams that page by number, not offset. */
  page: number;
  freshness: Freshness;
  includeDomains: string[];
  excludeDomains: string[];
  /** Text mode, and whether markdown is asked for: an upstream that renders it natively may give `markdown`. */
  text: TextMode | null;
  summary: boolean;
  /** BCP 47 tag the client asked for (e.g. "en", "pt-BR"), or null: the provider's configured default applies. */
  language: string | null;
  /** The gateway's clock (epoch ms), for turning presets into dates. */
  nowMs: number;
  signal: AbortSignal;
}

export interface ProviderSearchResult {
  url: string;
  title?: string | null;
  snippet?: string | null;
  text?: string | null;
  /**
   * The page text as markdown, when the request asks for markdown: from an upstream that renders it
   * (Tavily, Jina), else filled from the content chain.
   */
  markdown?: string | null;
  summary?: string | null;
  datePublished?: string | null;
  dateLastCrawled?: string | null;
  /**
   * The provider's own calibrated P(relevant) in [0, 1], where it computes one (the local index's
   * hybrid scorer). When every result of a list has one and the gateway does not rerank it, they are
   * the list's scores; a vendor's rank-based score is not one.
   */
  relevance?: number | null;
}

export interface SearchPage {
  results: ProviderSearchResult[];
  /**
   * Whether asking for the next page can give more. Upstreams whose pages vary in size (SearXNG,
   * MediaWiki's continue) say so; when absent, a page shorter than asked means the end.
   */
  hasMore?: boolean;
  totalEstimatedMatches?: number | null;
  someResultsRemoved?: boolean | null;
}

export interface SearchProvider {
  readonly name: string;
  readonly capabilities: SearchCapabilities;
  search(call: SearchCall): Promise<SearchPage>;
  /** A provider that serves a copy of an index on object storage says how current the copy is (/readyz, /metrics). */
  indexReplica?(): MirrorStatus | null;
}

export interface PageContent {
  text: string;
  /**
   * The same main text as markdown (headings, lists, tables, code fences), when it was asked for
   * and the provider has the page's markup or its own rendering; absent otherwise.
   */
  markdown?: string | null;
  title?: string | null;
  datePublished?: string | null;
}

/** Why a page has no text, as the content operation reports it per URL (Tavily's failed_results, Exa's statuses). */
export type PageFailureReason = 'not_found' | 'timeout' | 'blocked' | 'error';

/**
 * A page's own failure, when a provider knows it: the page answered 404, its address is refused,
 * it took too long. It is the page's problem, not the provider's, so it never counts against the
 * provider's health.
 */
export interface PageFailure {
  failure: PageFailureReason;
  /** The status the page's server answered, when that is the failure. */
  httpStatus?: number;
}

export const isPageFailure = (value: PageContent | PageFailure | null): value is PageFailure => value !== null && 'failure' in value;

export interface ContentCall {
  maxCharacters: number;
  /** Whether the caller wants `markdown` beside the text: it costs a rendering, so only on request. */
  markdown: boolean;
  signal: AbortSignal;
}

export interface ContentProvider {
  readonly name: string;
  /** The main text of the page; null when the provider has none for it and does not know why. */
  fetchContent(url: string, options: ContentCall): Promise<PageContent | PageFailure | null>;
}

export interface RerankCall {
  /** The model id the upstream expects. */
  model: string;
  query: string;
  documents: string[];
  signal: AbortSignal;
}

export interface RerankProvider {
  readonly name: string;
  readonly capabilities: { maxDocuments: number };
  /** Loads what the provider needs before the gateway listens (a local model); a throw stops the start. */
  start?(logger: Logger): Promise<void>;
  close?(): Promise<void>;
  /** For /metrics: the work of an in-process model; null while none is loaded. */
  telemetry?(): ModelTelemetry | null;
  rerank(call: RerankCall): Promise<RerankScores>;
}

export interface RerankScores {
  /** One score in [0, 1] per document, in document order. */
  scores: number[];
  /** Tokens the upstream says it processed, where it reports them (Voyage, Jina); Voyage's clients read the sum. */
  totalTokens?: number;
}

/**
 * One upstream vendor, by the `type` key of a provider's config: the JSON Schema of its options
 * (checked at startup) and a builder for each operation it serves. A vendor with several endpoints
 * (Exa's search and contents, Jina's search, reader and rerank) is one type with one config block.
 */
export interface ProviderType {
  optionsSchema: object;
  search?: (name: string, options: any) => SearchProvider;
  content?: (name: string, options: any) => ContentProvider;
  rerank?: (name: string, options: any) => RerankProvider;
}

/**
 * A vendor's reply as it arrives, typed by the vendor's wire format (src/vendors/<vendor>/wire.ts)
 * so that a provider names its fields as the dialect does, but with every value still to be checked:
 * an upstream's JSON is never trusted to match its documentation.
 */
export type Unchecked<Shape> = { readonly [Field in keyof Shape]?: unknown };
