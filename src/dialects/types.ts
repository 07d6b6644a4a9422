/**
 * A dialect lets a client written for another vendor talk to searchgate unchanged
 * (../shared/spec/dialects.md §1): it reads the vendor's request into one of searchgate's own
 * operations (web search, page content, rerank) and writes the answer, or the failure, in the
 * vendor's shape. It is a translation only. Keys, accounts, allowance, cache, provider chains and
 * metrics are the gateway's, run by the one route handler in src/server/routes.ts.
 *
 * Like a SearXNG engine, a dialect is declarative: where its clients put the key, its routes (each
 * a reader and a renderer), and how it words an error. Each vendor's dialect lives in its folder
 * (src/vendors/<vendor>/dialect.ts), beside that vendor's wire types and provider.
 */
import type { ApiError, ErrorKind } from '../api/errors.js';
import type { RequestValidator, RerankRequest, WebSearchRequest } from '../api/validate.js';
import type { ContentOutcome, ContentRequest } from '../gateway/content.js';
import type { RerankOutcome, ResolvedModel } from '../gateway/rerank.js';
import type { SearchOutcome } from '../gateway/search.js';
import type { RateWindowState } from '../state/store.js';

/** Where a vendor's clients send the key; a dialect lists them in the order they are tried. */
export type KeyLocation =
  | { in: 'bearer' }
  | { in: 'header'; name: string }
  | { in: 'query'; name: string }
  | { in: 'body'; field: string }
  | { in: 'path'; param: string };

/** A request as a dialect's reader sees it. A key taken from the body or the path is already gone. */
export interface DialectInput {
  method: string;
  /** Query-string parameters; a repeated one keeps every value. */
  query: Record<string, string | string[] | undefined>;
  /** The JSON object or form fields of the body; {} when there is none. */
  body: Record<string, unknown>;
  header(name: string): string | undefined;
}

/** What a reader may consult besides the request: the gateway's validator and settings. */
export interface DialectTools {
  validator: RequestValidator;
  /** The gateway's clock (epoch ms), for relative dates ("the last 7 days"). */
  now(): number;
  resolveRerankModel(model: string): ResolvedModel;
  settings: DialectSettings;
}

export interface DialectSettings {
  /** rerank.maxDocuments */
  maxRerankDocuments: number;
  /** dialects.tavily.rawContentMaxCharacters */
  tavilyRawContentMaxCharacters: number;
  /** content.timeBudgetMs */
  contentTimeBudgetMs: number;
}

/** A request read: the operation's own request, and what the renderer needs to remember of the vendor's. */
export interface Read<Request, Echo> {
  request: Request;
  echo: Echo;
}

/** An answer as a dialect's renderer sees it. */
export interface Served<Request, Outcome, Echo> {
  request: Request;
  echo: Echo;
  outcome: Outcome;
  logId: string;
  /** Allowance units charged for this request: vendors' billing counters report it (0 for operator keys). */
  units: number;
  /** Since the request arrived. */
  elapsedMs: number;
  /** scheme://host:port of this gateway, as the client reached it. */
  origin: string;
  nowMs: number;
}

interface RouteShape<Operation extends string, Request, Outcome, Echo> {
  operation: Operation;
  methods: ReadonlyArray<'GET' | 'POST'>;
  /** A @koa/router path: `/searxng/:key/search`. */
  path: string;
  /** Body types a POST accepts; JSON unless said (SearXNG also takes form fields). */
  bodyTypes?: ReadonlyArray<'json' | 'form'>;
  /** The `dialect` label of the route's metrics when it is not the dialect's name (root /v1/rerank is LangSearch's). */
  label?: string;
  /** Validates the vendor's request and maps it; throws a 4xx ApiError for what the vendor would refuse. */
  read(input: DialectInput, tools: DialectTools): Read<Request, Echo>;
  render(served: Served<Request, Outcome, Echo>): unknown;
  /** The route's own error shape, where it differs from the rest of its dialect's (/v1/rerank's adds `detail`). */
  renderError?(failure: DialectFailure): ErrorReply;
  /** For the OpenAPI document: the request's JSON Schema (query parameters or body) and a summary. */
  docs?: { summary: string; parameters?: object; body?: object; response?: object };
}

export type SearchRoute<Echo = unknown> = RouteShape<'search', WebSearchRequest, SearchOutcome, Echo>;
export type ContentRoute<Echo = unknown> = RouteShape<'content', ContentRequest, ContentOutcome, Echo>;
export type RerankRoute<Echo = unknown> = RouteShape<'rerank', RerankRequest, RerankOutcome, Echo>;
export type DialectRoute = SearchRoute<any> | ContentRoute<any> | RerankRoute<any>;

/** Helpers that type-check a route's reader against its renderer, then let it join a list. */
export const searchRoute = <Echo>(route: SearchRoute<Echo>): DialectRoute => route;
export const contentRoute = <Echo>(route: ContentRoute<Echo>): DialectRoute => route;
export const rerankRoute = <Echo>(route: RerankRoute<Echo>): DialectRoute => route;

/** A failure as a dialect's error renderer sees it. */
export interface DialectFailure {
  error: ApiError;
  kind: ErrorKind;
  logId: string;
  nowMs: number;
  /** scheme://host:port of this gateway, as the client reached it. */
  origin: string;
}

/** A failure in a vendor's shape: its status, body, and (for clients that show only it) the reason phrase. */
export interface ErrorReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** HTTP reason phrase; printable ASCII, cut to 80 characters where it is set. */
  reason?: string;
}

/**
 * A part of the URL space whose answers, errors included (an unknown path, a wrong method, a body
 * too large), are in one vendor's shape.
 */
export interface ErrorScope {
  /** The `dialect` label of metrics and logs. */
  name: string;
  /** Paths under these prefixes (and the routes' own paths) are in this scope. */
  prefixes: readonly string[];
  renderError(failure: DialectFailure): ErrorReply;
  /** The path as logs may show it: a key carried in the path replaced by [REDACTED]. */
  redactPath?(path: string): string;
}

export interface Dialect extends ErrorScope {
  keys: readonly KeyLocation[];
  /** Tells a client without a key where to put one, for the missing-key message. */
  keyHint: string;
  routes: readonly DialectRoute[];
  /**
   * Rewrites the X-RateLimit-* headers of an account's answers into the vendor's own format (Brave's
   * two windows), given the short-term window the request left the account in.
   */
  rateLimitHeaders?(standard: Readonly<Record<string, string>>, windows: RateWindowState): Record<string, string>;
  /** The vendor's rerank model names, accepted on every rerank route as aliases of the default model. */
  rerankModels?: readonly string[];
}

/** The short-term window an account is in, for vendors whose headers report it. */
export type { RateWindowState } from '../state/store.js';
