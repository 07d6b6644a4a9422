/**
 * SearXNG's JSON search API, both directions: what searchgate asks a SearXNG instance (search.ts) and
 * what it answers SearXNG's clients (dialect.ts). Sources: https://docs.searxng.org/dev/search_api.html;
 * searxng/searxng searx/webapp.py `search()` (format check, "No query") and `index_error` (the error
 * body); searx/webutils.py `get_json_response` (the reply's keys) and `get_translated_errors` (the
 * [engine, reason] pairs of unresponsive_engines).
 */
import type { Unchecked } from '../../providers/types.js';

/** The one search endpoint, under an instance's root. */
export const SEARXNG_SEARCH_PATH = '/search';

/** The output format searchgate speaks; an instance that has not enabled it answers 403. */
export const SEARXNG_JSON_FORMAT = 'json';

export const SEARXNG_TIME_RANGES = ['day', 'week', 'month', 'year'] as const;
export type SearxngTimeRange = (typeof SEARXNG_TIME_RANGES)[number];

/** The category of web results, which a client searching the web asks for (and SearXNG's default). */
export const SEARXNG_GENERAL_CATEGORY = 'general';

/** The result template of a plain web result. */
export const SEARXNG_DEFAULT_TEMPLATE = 'default.html';

/** Language values that name no language: every language, or the one SearXNG guesses from the query. */
export const SEARXNG_ANY_LANGUAGE = ['all', 'auto'] as const;

/** GET /search's query parameters (a POST sends the same as form fields). */
export type SearxngSearchParameters = {
  q: string;
  format?: string;
  /** 1-based. */
  pageno?: number;
  /** Comma-separated category names (general, news, …). */
  categories?: string;
  /** Comma-separated engine names from the instance's settings.yml. */
  engines?: string;
  time_range?: SearxngTimeRange;
  /** A language code (en, pt-BR), or all / auto. */
  language?: string;
  /** 0 off, 1 moderate, 2 strict. */
  safesearch?: 0 | 1 | 2;
};

/** One result as SearXNG serializes a default.html result. */
export interface SearxngResult {
  url: string;
  title: string;
  content: string;
  engine: string;
  engines: string[];
  category: string;
  /** datetime.isoformat(), or null when no engine gave a date. */
  publishedDate: string | null;
  positions: number[];
  score: number;
  /** Python's urlparse: scheme, netloc, path, params, query, fragment. */
  parsed_url: [string, string, string, string, string, string];
  template: string;
}

/** The JSON reply of GET /search?format=json. */
export interface SearxngResponse {
  query: string;
  number_of_results: number;
  results: SearxngResult[];
  answers: unknown[];
  corrections: unknown[];
  infoboxes: unknown[];
  suggestions: unknown[];
  /** [engine, reason] for each engine that did not answer. */
  unresponsive_engines: Array<[string, string]>;
}

/** A reply as it arrives from an instance: every field still to be checked. */
export type SearxngReply = Unchecked<SearxngResponse>;

/** SearXNG's JSON error body. */
export interface SearxngError {
  error: string;
}

/** `search()`'s answer to a request without q. */
export const SEARXNG_NO_QUERY = 'No query';
