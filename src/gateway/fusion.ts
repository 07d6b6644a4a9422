/**
 * Merging result lists from several search providers: reciprocal rank fusion (Cormack, Clarke and
 * Büttcher, SIGIR 2009), deduplication by a normalized URL, and one record per page that keeps the
 * richest facts any source had (its text, its date, the longest snippet).
 *
 * RRF rather than score fusion because upstream scores are on incomparable scales (BM25, neural,
 * none at all); ranks are the one thing every engine gives.
 */
import type { ProviderSearchResult } from '../providers/types.js';
import { hostWithoutWww } from '../util/domains.js';

/** Query parameters that track the click, not the page. */
const TRACKING_PARAMETER = /^(utm_[a-z]+|gclid|dclid|fbclid|msclkid|mc_cid|mc_eid|yclid|_hsenc|_hsmi|igshid|ref_src)$/i;

/**
 * The identity of a page for deduplication: scheme-less, lower-case host without www., default port,
 * fragment, trailing slash and tracking parameters dropped, remaining parameters sorted. Engines
 * report the same page as http and https, with and without www. and with their own click tags.
 */
export function dedupeKey(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const host = hostWithoutWww(parsed.hostname);
  const port = parsed.port && parsed.port !== '80' && parsed.port !== '443' ? `:${parsed.port}` : '';
  const path = parsed.pathname.replace(/\/+$/, '') || '/';
  // Most result URLs have no query: reading searchParams would build a URLSearchParams for nothing.
  return `${host}${port}${path}${parsed.search === '' ? '' : pageParameters(parsed.searchParams)}`;
}

/** The query string less its tracking parameters, sorted by name; '' when none is left. */
function pageParameters(searchParams: URLSearchParams): string {
  const parameters = [...searchParams].filter(([name]) => !TRACKING_PARAMETER.test(name)).sort(([a], [b]) => a.localeCompare(b));
  return parameters.length ? `?${new URLSearchParams(parameters).toString()}` : '';
}

/** Two records of one page as one: every field from whichever source had it, the fuller one where both did. */
export function mergeRecords(first: ProviderSearchResult, second: ProviderSearchResult): ProviderSearchResult {
  const longer = (a: string | null | undefined, b: string | null | undefined) => ((b?.length ?? 0) > (a?.length ?? 0) ? b : a);
  return {
    // The better-ranked source's address and title: it is what that engine judged the page by.
    url: preferHttps(first.url, second.url),
    title: first.title || second.title || null,
    snippet: longer(first.snippet, second.snippet) ?? null,
    text: longer(first.text, second.text) ?? null,
    summary: longer(first.summary, second.summary) ?? null,
    datePublished: first.datePublished || second.datePublished || null,
    dateLastCrawled: first.dateLastCrawled || second.dateLastCrawled || null,
  };
}

function preferHttps(a: string, b: string): string {
  return a.startsWith('http:') && b.startsWith('https:') ? b : a;
}

export interface RankedList {
  provider: string;
  results: readonly ProviderSearchResult[];
  /** Multiplies this list's contributions; default 1. */
  weight?: number;
}

export interface FusedResult {
  result: ProviderSearchResult;
  score: number;
  /** Providers that returned the page, in the order of the lists. */
  providers: string[];
}

/**
 * score(page) = Σ over lists of weight / (k + rank), rank from 1. Ties keep the order in which pages
 * were first seen, list by list, so the outcome is deterministic.
 */
export function reciprocalRankFusion(lists: readonly RankedList[], k: number): FusedResult[] {
  const byKey = new Map<string, FusedResult & { bestRank: number; seen: number }>();
  let seen = 0;
  for (const list of lists) {
    const weight = list.weight ?? 1;
    const counted = new Set<string>();
    list.results.forEach((result, position) => {
      const key = dedupeKey(result.url);
      // A provider that lists one page twice gets credit for its better rank only.
      if (counted.has(key)) return;
      counted.add(key);
      const rank = position + 1;
      const contribution = weight / (k + rank);
      const existing = byKey.get(key);
      if (!existing) {
        byKey.set(key, { result, score: contribution, providers: [list.provider], bestRank: rank, seen: seen++ });
        return;
      }
      existing.score += contribution;
      existing.providers.push(list.provider);
      existing.result = rank < existing.bestRank ? mergeRecords(result, existing.result) : mergeRecords(existing.result, result);
      existing.bestRank = Math.min(existing.bestRank, rank);
    });
  }
  return [...byKey.values()]
    .sort((a, b) => b.score - a.score || a.seen - b.seen)
    .map(({ result, score, providers }) => ({ result, score, providers }));
}
