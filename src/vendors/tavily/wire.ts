/**
 * Tavily's wire format, both directions: what searchgate sends Tavily (search.ts, extract.ts) and
 * what it answers Tavily's clients (dialect.ts). Docs:
 * https://docs.tavily.com/documentation/api-reference/endpoint/search and /extract,
 * https://help.tavily.com/articles/8645538886-understanding-http-errors; the clients read:
 * tavily-python 0.8.5 tavily/tavily.py, @tavily/core 0.7.13 dist/index.js (../shared/spec/dialects.md §5.1, §6.5–6.6).
 */
import type { PageFailure, PageFailureReason } from '../../providers/types.js';

/** Most results one search returns (max_results accepts 0..20). */
export const TAVILY_MAX_RESULTS = 20;
/** max_results when the client sends none. */
export const TAVILY_DEFAULT_MAX_RESULTS = 5;
/** Most URLs one extract takes. */
export const TAVILY_MAX_EXTRACT_URLS = 20;

export type TavilyPeriod = 'day' | 'week' | 'month' | 'year';
/** time_range values: each period, by its name or its initial. */
export const TAVILY_TIME_RANGES: Readonly<Record<string, TavilyPeriod>> = {
  day: 'day',
  d: 'day',
  week: 'week',
  w: 'week',
  month: 'month',
  m: 'month',
  year: 'year',
  y: 'year',
};

export const TAVILY_TOPICS = ['general', 'news', 'finance'] as const;
export type TavilyTopic = (typeof TAVILY_TOPICS)[number];

export interface TavilySearchRequest {
  query: string;
  max_results?: number;
  search_depth?: 'basic' | 'advanced' | 'fast' | 'ultra-fast';
  topic?: TavilyTopic;
  time_range?: string;
  /** YYYY-MM-DD */
  start_date?: string;
  end_date?: string;
  /** Days back, for the news topic. */
  days?: number;
  include_domains?: string[];
  exclude_domains?: string[];
  /** Page text per result: true (markdown), "markdown" or "text". */
  include_raw_content?: boolean | 'markdown' | 'text';
  include_answer?: boolean | 'basic' | 'advanced';
  include_images?: boolean;
  include_image_descriptions?: boolean;
  include_favicon?: boolean;
  include_usage?: boolean;
  country?: string;
  language?: string;
}

export interface TavilySearchResult {
  title: string;
  url: string;
  /** The snippet. */
  content: string;
  score: number;
  raw_content: string | null;
  /** Sent for the news topic. */
  published_date?: string;
  favicon?: string | null;
}

export interface TavilyUsage {
  credits: number;
}

export interface TavilySearchResponse {
  query: string;
  follow_up_questions: string[] | null;
  answer: string | null;
  images: unknown[];
  results: TavilySearchResult[];
  /** Seconds. */
  response_time: number;
  request_id: string;
  usage?: TavilyUsage;
}

export interface TavilyExtractRequest {
  urls: string | string[];
  extract_depth?: 'basic' | 'advanced';
  format?: 'markdown' | 'text';
  /** Seconds. */
  timeout?: number;
  include_images?: boolean;
  include_favicon?: boolean;
  include_usage?: boolean;
}

export interface TavilyExtractResult {
  url: string;
  title?: string | null;
  raw_content: string;
  images: unknown[];
  favicon?: string | null;
}

/** A URL Tavily could not extract, inside a 200 reply: `error` says why, in words. */
export interface TavilyFailedResult {
  url: string;
  error: string;
}

export interface TavilyExtractResponse {
  results: TavilyExtractResult[];
  failed_results: TavilyFailedResult[];
  response_time: number;
  request_id: string;
  usage?: TavilyUsage;
}

/**
 * Every Tavily error: `{"detail": {"error": "…"}}`. Never a top-level object `error` with a string
 * `code`: @tavily/core (always) and tavily-python (in keyless mode) take that for a keyless-limit
 * envelope and raise TavilyKeylessLimitError.
 */
export interface TavilyErrorBody {
  detail: { error: string };
}

/** 432: the plan's usage limit; 433: the pay-as-you-go limit. tavily-python raises ForbiddenError for both. */
export const TAVILY_PLAN_LIMIT_STATUS = 432;
export const TAVILY_PAYG_LIMIT_STATUS = 433;

/** Tavily's own sentences for its errors (help.tavily.com, "Understanding HTTP errors"). */
export const TAVILY_MESSAGES = {
  unauthorized: 'Unauthorized: missing or invalid API key.',
  planLimit: "This request exceeds your plan's set usage limit.",
  rateLimited: 'Your request has been blocked due to excessive requests.',
} as const;

/**
 * failed_results' `error` for each reason a page has no text. Tavily words these freely; searchgate
 * words them so that pageFailureOf reads them back (a searchgate behind a searchgate's Tavily dialect).
 */
export function failedResultError({ failure, httpStatus }: PageFailure): string {
  switch (failure) {
    case 'not_found':
      return httpStatus === undefined ? 'Page not found: no text could be extracted' : `Page not found: the page answered HTTP ${httpStatus}`;
    case 'timeout':
      return 'Timed out fetching the page';
    case 'blocked':
      return 'Blocked: the address is not allowed';
    case 'error':
      return 'Failed to fetch the page';
  }
}

const FAILURE_WORDS: ReadonlyArray<[RegExp, PageFailureReason]> = [
  [/time[ds]?[ -]?out/i, 'timeout'],
  [/blocked|forbidden|not allowed|robots/i, 'blocked'],
  [/not found|\b404\b|\b410\b/i, 'not_found'],
];

/**
 * Why Tavily says a page failed, read from failed_results' words: "error" when they name no known
 * reason; null when there are no words, Tavily not saying why.
 */
export function pageFailureOf(error: unknown): PageFailure | null {
  if (typeof error !== 'string' || error.trim() === '') return null;
  const failure = FAILURE_WORDS.find(([pattern]) => pattern.test(error))?.[1] ?? 'error';
  const status = /\bHTTP (\d{3})\b/.exec(error)?.[1];
  return failure === 'not_found' && status ? { failure, httpStatus: Number(status) } : { failure };
}
