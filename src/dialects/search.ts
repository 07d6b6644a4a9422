/**
 * What the search dialects share (../shared/spec/dialects.md §1.3): `site:` operators moved into
 * domain filters (R8), the vendors' date filters as searchgate freshness (R9), and the honest
 * defaults a vendor's client requires but searchgate may not know (R6): a relevance score, a title
 * and a snippet that are never null, ISO dates.
 */
import { badRequest, type InvalidParameter } from '../api/errors.js';
import { freshnessProblem, parseFreshness, utcDayStart, type Freshness, type FreshnessPreset } from '../api/freshness.js';
import { normalizeDomain } from '../api/validate.js';
import type { GatewayResult, SearchOutcome } from '../gateway/search.js';
import { leadingSentences } from '../gateway/text.js';

// ---- R8: site: operators ------------------------------------------------------------------------

export interface SiteFilters {
  query: string;
  includeDomains: string[];
  excludeDomains: string[];
}

/** litellm's wrappers of a query and its domains: Brave `(q) AND (site:a OR site:b)`, Serper `(q) (site:a OR site:b)`. */
const LITELLM_WRAPPERS = [/^\((.*)\) AND \((site:\S+(?: OR site:\S+)*)\)$/s, /^\((.*)\) \((site:\S+(?: OR site:\S+)*)\)$/s];
const SITE_TOKEN = /(^|\s)(-?)site:(\S+)/gi;

/**
 * The query with its `site:` operators taken out as domain filters: first litellm's two exact
 * wrappers, then any standalone `site:x` (include) or `-site:x` (exclude) token.
 */
export function siteOperators(raw: string): SiteFilters {
  const includeDomains: string[] = [];
  const excludeDomains: string[] = [];
  let query = raw;
  for (const wrapper of LITELLM_WRAPPERS) {
    const match = wrapper.exec(raw);
    if (match) {
      query = match[1]!;
      includeDomains.push(...match[2]!.split(' OR ').map((site) => site.slice('site:'.length)));
      break;
    }
  }
  query = query.replace(SITE_TOKEN, (_token, space: string, minus: string, site: string) => {
    (minus ? excludeDomains : includeDomains).push(site);
    return space;
  });
  return {
    query: query.replace(/\s+/g, ' ').trim(),
    includeDomains: domains(includeDomains),
    excludeDomains: domains(excludeDomains),
  };
}

const domains = (list: readonly string[]) => [...new Set(list.map(normalizeDomain).filter(Boolean))];

/** The query after R8, refused when nothing but operators was in it. */
export function queryAndSites(
  raw: string,
  parameter: string,
  { operators = true, location = 'query' }: { operators?: boolean; location?: InvalidParameter['location'] } = {},
): SiteFilters {
  const filters = operators ? siteOperators(raw) : { query: raw.trim(), includeDomains: [], excludeDomains: [] };
  if (filters.query === '') {
    throw badRequest(`${parameter} must contain search terms, not only site: operators`, { parameter, location, problem: 'invalid', value: raw });
  }
  return filters;
}

/** Two domain lists as one: every domain once. */
export const mergeDomains = (...lists: ReadonlyArray<readonly string[] | undefined>) => domains(lists.flatMap((list) => list ?? []));

// ---- R9: freshness ------------------------------------------------------------------------------

export type Period = 'day' | 'week' | 'month' | 'year';

export const PERIOD_PRESET: Readonly<Record<Period, FreshnessPreset>> = {
  day: 'oneDay',
  week: 'oneWeek',
  month: 'oneMonth',
  year: 'oneYear',
};

/** Days a period stands for when a vendor asks for N of them (a month is 31 days, a year 366, as the presets). */
const PERIOD_DAYS: Readonly<Record<Period, number>> = { day: 1, week: 7, month: 31, year: 366 };

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The last N periods: the preset for one, else the range of UTC days from N periods ago to today. */
export function lastPeriods(count: number, period: Period, nowMs: number): Freshness {
  if (count <= 1) return parseFreshness(PERIOD_PRESET[period]);
  return parseFreshness(`${isoDay(nowMs - count * PERIOD_DAYS[period] * DAY_MS)}..${isoDay(nowMs)}`);
}

/**
 * A date range as searchgate freshness: the UTC days its bounds fall on, a missing start 1970-01-01,
 * a missing end today. Bounds are dates or date-times in any form Date.parse reads; an unreadable
 * bound or a reversed range is a 400 with /v1's freshness message, about `parameter`.
 */
export function dateRange(start: string | undefined, end: string | undefined, nowMs: number, parameter: Omit<InvalidParameter, 'problem'>): Freshness {
  const day = (value: string | undefined, fallback: string) => {
    if (value === undefined || value === '') return fallback;
    // A calendar day must exist (2024-02-30 does not), in a date or a date-time alike: Date.parse would
    // roll it into March.
    const calendarDay = /^\d{4}-\d{2}-\d{2}/.exec(value)?.[0];
    const ms = calendarDay !== undefined && utcDayStart(calendarDay) === null ? Number.NaN : /^\d{4}-\d{2}-\d{2}$/.test(value) ? utcDayStart(value)! : Date.parse(value);
    if (Number.isNaN(ms)) throw badRequest(`${parameter.parameter}: ${value} is not a valid date`, { ...parameter, problem: 'invalid', value });
    return isoDay(ms);
  };
  const from = day(start, '1970-01-01');
  const to = day(end, isoDay(nowMs));
  const raw = from === to ? from : `${from}..${to}`;
  const problem = freshnessProblem(raw);
  if (problem) throw badRequest(problem, { ...parameter, problem: 'invalid', value: `${start ?? ''}..${end ?? ''}` });
  return parseFreshness(raw);
}

// ---- R6: honest defaults ------------------------------------------------------------------------

/**
 * A result's title where a client requires a string: the title, else "" (never null). /v1 names an
 * untitled result by its address; a vendor's client gets no title rather than one made up.
 */
export const titleOf = (result: GatewayResult): string => (result.name === result.displayUrl ? '' : result.name);

/** A result's snippet where a client joins strings: the snippet, else the first 300 code points of the text, else "". */
export const snippetOf = (result: GatewayResult): string => result.snippet || (result.text ? leadingSentences(result.text, 300) : '');

/**
 * A relevance score per result: the rerank score when searchgate reranked the list, else
 * (n − i) / n for the i-th of n results, counting from 0: rank-derived, not a probability.
 */
export function relevanceScores(outcome: SearchOutcome): number[] {
  const n = outcome.results.length;
  return outcome.scores ?? outcome.results.map((_result, i) => (n - i) / n);
}

/** The upstream's estimate of matches, else the number of results: never invented beyond what is known. */
export const totalMatches = (outcome: SearchOutcome, offset = 0): number =>
  outcome.totalEstimatedMatches ?? offset + outcome.results.length;
