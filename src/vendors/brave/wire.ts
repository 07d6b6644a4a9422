/**
 * The Brave Search API's web search wire format, both directions: what searchgate sends Brave
 * (search.ts) and what it answers Brave's clients (dialect.ts).
 *
 * Sources: the API reference (api-dashboard.search.brave.com/api-reference/web/search/get) and the
 * parameter and reply tables of brave/brave-search-skills skills/web-search/SKILL.md; error bodies as
 * the live API sent them (egoist/chatwise-releases#936 and #1296, brave/brave-search-mcp-server#56)
 * and the API reference's 422/429 examples; the rate headers of
 * https://api.search.brave.com/app/documentation/web-search/response-headers, whose format a live
 * reply confirms ("x-ratelimit-policy: 50;w=1, 0;w=2678400").
 */
import type { Period } from '../../dialects/search.js';

export const BRAVE_WEB_SEARCH_PATH = '/res/v1/web/search';
/** Where Brave takes the key. */
export const BRAVE_KEY_HEADER = 'X-Subscription-Token';

/** count is 1..20, 20 when not given. */
export const BRAVE_MAX_COUNT = 20;
export const BRAVE_DEFAULT_COUNT = 20;
/** offset is a page index, not a result count: pages 0..9 of `count` results. */
export const BRAVE_LAST_PAGE = 9;

/** freshness: the last day, week, month (31 days) or year, or a custom range (see braveDateRange). */
export const BRAVE_FRESHNESS: Readonly<Record<Period, string>> = { day: 'pd', week: 'pw', month: 'pm', year: 'py' };
/** A custom freshness range of UTC days: YYYY-MM-DDtoYYYY-MM-DD. */
export const braveDateRange = (startDay: string, endDay: string) => `${startDay}to${endDay}`;
export const BRAVE_DATE_RANGE = /^(\d{4}-\d{2}-\d{2})to(\d{4}-\d{2}-\d{2})$/;

/** The search_lang values Brave accepts; any other is a 422. */
export const BRAVE_SEARCH_LANGUAGES: ReadonlySet<string> = new Set(
  'ar eu bn bg ca zh-hans zh-hant hr cs da nl en en-gb et fi fr gl de el gu he hi hu is it jp kn ko lv lt ms ml mr nb pl pt-br pt-pt pa ro ru sr sk sl es sv ta te th tr uk vi'.split(' '),
);
/** The search_lang codes that are not the BCP 47 tag of their language (every other one is). */
export const BRAVE_LANGUAGE_TAGS: ReadonlyMap<string, string> = new Map([
  ['jp', 'ja'],
  ['zh-hans', 'zh-Hans'],
  ['zh-hant', 'zh-Hant'],
  ['en-gb', 'en-GB'],
  ['pt-br', 'pt-BR'],
  ['pt-pt', 'pt-PT'],
]);

/** An inline Goggle rule that drops a site from the results; a Goggle is one rule per line. */
export const discardSiteRule = (domain: string) => `$discard,site=${domain}`;

/**
 * The sites an inline Goggle discards: its rules made only of options (`$discard,site=example.com`,
 * in any order) that discard one site. A hosted Goggle (a URL) and every other rule are not read.
 */
export function discardedSites(goggle: string): string[] {
  return goggle.split('\n').flatMap((line) => {
    const rule = line.trim();
    if (!rule.startsWith('$')) return [];
    const options = rule.slice(1).split(',').map((option) => option.trim());
    const site = options.find((option) => option.startsWith('site='))?.slice('site='.length);
    return options.includes('discard') && site ? [site] : [];
  });
}

/** The query parameters (GET) or JSON body fields (POST) of a web search. */
export type BraveWebSearchParameters = {
  q: string;
  count?: number;
  offset?: number;
  freshness?: string;
  search_lang?: string;
  country?: string;
  safesearch?: 'off' | 'moderate' | 'strict';
  /** Comma-separated sections: web, news, videos, discussions, faq, infobox, query, summarizer, locations. */
  result_filter?: string;
  text_decorations?: boolean;
  /** A hosted Goggle's URL or inline rules; repeatable. */
  goggles?: string | string[];
  /** false: site:, filetype: and the other operators in q are searched as words. */
  operators?: boolean;
  extra_snippets?: boolean;
  spellcheck?: boolean;
  summary?: boolean;
  include_fetch_metadata?: boolean;
  enable_rich_callback?: boolean;
  ui_lang?: string;
  units?: 'metric' | 'imperial';
  goggles_id?: string;
};

export interface BraveMetaUrl {
  scheme: string;
  netloc: string;
  hostname: string;
  path: string;
}

export interface BraveWebResult {
  type: 'search_result';
  title: string;
  url: string;
  /** The snippet, with <strong> highlights unless text_decorations=false. */
  description: string;
  /** The page's date: an ISO 8601 date-time without a zone, in UTC (see bravePageAge). */
  page_age?: string;
  /** The date as shown: "2 days ago", "April 12, 2023". */
  age?: string;
  meta_url: BraveMetaUrl;
  /** Absent or a list: LangChain spreads it (`*item.get("extra_snippets", [])`). */
  extra_snippets?: string[];
}

/**
 * A web search's answer. Sections with no results are left out, never null: Brave leaves out `web`
 * when nothing matched, and litellm validates every section present as an object.
 */
export interface BraveWebSearchResponse {
  type: 'search';
  query: { original: string; more_results_available: boolean };
  web?: { type: 'search'; results: BraveWebResult[] };
}

/** A UTC instant as Brave writes page_age (2023-04-12T14:22:41); undefined for what is no instant. */
export function bravePageAge(isoInstant: string): string | undefined {
  const ms = Date.parse(isoInstant);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString().slice(0, 19);
}

/**
 * Error codes: Brave's (VALIDATION, SUBSCRIPTION_TOKEN_INVALID, SUBSCRIPTION_NOT_FOUND,
 * RATE_LIMITED, QUOTA_LIMITED), and searchgate's own for what no Brave example shows (an unknown
 * path, a wrong method, an upstream failure).
 */
export type BraveErrorCode =
  | 'VALIDATION'
  | 'SUBSCRIPTION_TOKEN_INVALID'
  | 'SUBSCRIPTION_NOT_FOUND'
  | 'RATE_LIMITED'
  | 'QUOTA_LIMITED'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'NOT_IMPLEMENTED'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_TIMEOUT'
  | 'INTERNAL_ERROR';

/** Brave's `detail` sentences. */
export const BRAVE_DETAILS = {
  validation: 'Unable to validate request parameter(s)',
  tokenInvalid: 'The provided subscription token is invalid.',
  rateLimited: 'Request rate limit exceeded for plan.',
  quotaLimited: 'Request quota limit exceeded for plan.',
} as const;

/** One entry of a VALIDATION error's meta.errors (FastAPI's shape): what is wrong, and where. */
export interface BraveValidationError {
  type: string;
  /** Where the parameter is ("query", "header", "body") and its name: ["query", "q"]. */
  loc: [string, string] | [string];
  msg: string;
  input: unknown;
}

/** The meta of a 429: the plan's limits and the account's use of them. */
export interface BraveRateLimitMeta {
  plan: string;
  rate_limit: number | null;
  rate_current: number | null;
  quota_limit: number;
  quota_current: number;
  component: 'rate_limiter';
}

export interface BraveErrorResponse {
  type: 'ErrorResponse';
  error: {
    id: string;
    status: number;
    code: BraveErrorCode;
    detail: string;
    meta: { errors: BraveValidationError[] } | { component: string } | BraveRateLimitMeta | Record<string, never>;
  };
  /** Epoch seconds. */
  time: number;
}

/** An error reply's code: `error.code` in live replies, `errors[0].code` in some reference examples. */
export function braveErrorCode(body: unknown): string | null {
  const reply = body as { error?: { code?: unknown }; errors?: Array<{ code?: unknown }> } | null | undefined;
  const code = reply?.error?.code ?? reply?.errors?.[0]?.code;
  return typeof code === 'string' ? code : null;
}

/** One window of the X-RateLimit headers: its size, its limit and what is left, and the seconds until it resets. */
export interface BraveRateWindow {
  windowSeconds: number;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/** Brave's X-RateLimit-* headers: each a comma-separated list with one entry per window, the shortest first. */
export function braveRateLimitHeaders(windows: readonly BraveRateWindow[]): Record<string, string> {
  const list = (entry: (window: BraveRateWindow) => string | number) => windows.map(entry).join(', ');
  return {
    'X-RateLimit-Limit': list((window) => window.limit),
    'X-RateLimit-Policy': list((window) => `${window.limit};w=${window.windowSeconds}`),
    'X-RateLimit-Remaining': list((window) => window.remaining),
    'X-RateLimit-Reset': list((window) => window.resetSeconds),
  };
}
