/**
 * Serper's Google search API (google.serper.dev), both directions: what searchgate asks Serper
 * (search.ts) and what it answers Serper's clients (dialect.ts). Serper publishes no API reference;
 * the shapes are those its clients read (langchain-community `utilities/google_serper.py`, litellm
 * `llms/serper/search/transformation.py`) and the api-evangelist/serper OpenAPI description; the
 * error body is the one observed live (crewAIInc/crewAI#633, MiroMindAI/MiroFlow#7). `tbs` is
 * Google's own time filter, which Serper passes through.
 */
import type { FreshnessPreset } from '../../api/freshness.js';
import type { Unchecked } from '../../providers/types.js';

export const SERPER_SEARCH_PATH = '/search';
export const SERPER_KEY_HEADER = 'x-api-key';

/** num: results per call. */
export const SERPER_DEFAULT_NUM = 10;
export const SERPER_MAX_NUM = 100;

/** POST /search's body (LangChain sends the same as query parameters). */
export type SerperSearchParameters = {
  q: string;
  num?: number;
  /** 1-based; with a constant num, page N holds results (N − 1)·num + 1 … N·num. */
  page?: number;
  /** Country whose Google is searched, two letters; Serper's default is us. */
  gl?: string;
  /** Interface language, a Google language code (en, zh-cn, iw). */
  hl?: string;
  /** Google's time filter: `qdr:<unit>[N]` or `cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY`. */
  tbs?: string;
  location?: string;
  autocorrect?: boolean;
  type?: string;
};

/** One organic result. */
export interface SerperOrganicResult {
  title: string;
  link: string;
  snippet: string;
  /** As Google shows it ("Jan 5, 2024", "3 days ago"); searchgate answers an ISO 8601 day. */
  date?: string;
  position: number;
  sitelinks?: Array<{ title: string; link: string }>;
}

/** The echo of the request in every reply. */
export interface SerperEcho {
  q: string;
  gl?: string;
  hl?: string;
  tbs?: string;
  num: number;
  page: number;
  type: 'search';
  /** "google" from Serper; searchgate, which is not Google, leaves it out. */
  engine?: string;
}

export interface SerperResponse {
  searchParameters: SerperEcho;
  organic: SerperOrganicResult[];
  /** Credits the call cost. */
  credits: number;
  answerBox?: unknown;
  knowledgeGraph?: unknown;
  peopleAlsoAsk?: unknown;
  relatedSearches?: unknown;
}

/** A reply as it arrives from Serper: every field still to be checked. */
export type SerperReply = Unchecked<SerperResponse>;

export interface SerperError {
  message: string;
  statusCode: number;
}

/** Serper's message for a missing or wrong key (403). */
export const SERPER_UNAUTHORIZED = 'Unauthorized.';

/** searchgate's presets as Google's "past hour/day/week/month/year" filters. */
export const SERPER_TBS_PRESETS: Readonly<Record<FreshnessPreset, string>> = { oneDay: 'qdr:d', oneWeek: 'qdr:w', oneMonth: 'qdr:m', oneYear: 'qdr:y' };

/** `qdr:` followed by a unit (hour, day, week, month, year) and an optional count. */
export const SERPER_TBS_RECENT = /^qdr:([hdwmy])(\d*)$/;

const US_DATE = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/;

/** Google's custom range takes US-style dates: cdr:1,cd_min:1/5/2024,cd_max:1/31/2024. */
export function serperDateRange(startDay: string, endDay: string): string {
  const us = (day: string) => {
    const [year, month, date] = day.split('-').map(Number);
    return `${month}/${date}/${year}`;
  };
  return `cdr:1,cd_min:${us(startDay)},cd_max:${us(endDay)}`;
}

/** A cd_min / cd_max date (M/D/YYYY) as YYYY-MM-DD; null when it is not in that form. */
export function isoDayOfUsDate(text: string): string | null {
  const match = US_DATE.exec(text.trim());
  return match ? `${match[3]}-${match[1]!.padStart(2, '0')}-${match[2]!.padStart(2, '0')}` : null;
}
