/**
 * Filters as SQL predicates that LanceDB evaluates inside the search, as a pre-filter served by
 * scalar indexes, so a filtered query still returns its top hits instead of the survivors of an
 * unfiltered top-k.
 *
 * Each page carries filter labels in a label-list (bitmap) column: its host and parent domains as
 * reversed host keys, and its publication year and month. A filter is then a union or complement of
 * a few bitmaps. Range predicates over B-trees had to list every row in range: at 243k pages
 * excluding the three biggest domains cost ~10 ms per query that way, ~0.2 ms as labels.
 *
 * Days have no labels: a fold reads the label index one value at a time (one request per distinct
 * label on an object store, docs/benchmarks.md "The fold on an object store"), and ten years of day
 * labels are ~3,650 values against ~130 for years and months. The days of a window's partly covered
 * months are a B-tree range over publishedAtMs instead, which lists at most a month of rows at
 * each end. Rows written before carry a day label as well; no query reads it.
 */
import type { IndexQuery } from '../types.js';

/**
 * The host's labels in reverse order, each followed by a dot: "docs.example.com" → "com.example.docs.".
 * A domain and all its subdomains then share the domain's key as a prefix, and nothing else does
 * ("badexample.com" → "com.badexample." does not start with "com.example.").
 */
export function reversedHostKey(domain: string): string {
  const labels = normalizeDomain(domain).split('.').filter((label) => label.length > 0);
  return labels.reverse().join('.') + '.';
}

/** Lower case, no "www.", no trailing dot: the shape IndexedPage.domain and filter entries share. */
export function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.+$/, '').replace(/^www\./, '');
}

/** A SQL string literal; quotes are doubled, which is the only escape the dialect knows. */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

export function sqlStringList(values: readonly string[]): string {
  return values.map(sqlString).join(', ');
}

/**
 * A page's host and every parent domain of it, as reversed host keys: "docs.example.com" →
 * ["com.", "com.example.", "com.example.docs."]. A domain filter matches a page when the filter's
 * key is among them, which is "the domain itself or a subdomain" and nothing else.
 */
export function hostSuffixKeys(domain: string): string[] {
  const labels = reversedHostKey(domain).split('.').filter((label) => label.length > 0);
  return labels.map((_, depth) => labels.slice(0, depth + 1).join('.') + '.');
}

// Date labels contain ":", which no host key does, so the two kinds never collide.
const yearLabel = (date: Date) => `y:${date.getUTCFullYear()}`;
const monthLabel = (date: Date) => `${yearLabel(date)}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`;

/** The publication year and month (UTC) of a page, e.g. "y:2024", "y:2024-05". */
export function publicationLabels(publishedAtMs: number | null): string[] {
  if (publishedAtMs === null) return [];
  const date = new Date(publishedAtMs);
  return [yearLabel(date), monthLabel(date)];
}

/** Every filter label of a page: host suffix keys and publication date labels. */
export function filterLabels(domain: string, publishedAtMs: number | null): string[] {
  return [...hostSuffixKeys(domain), ...publicationLabels(publishedAtMs)];
}

function startOfUtcMonth(ms: number): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

function startOfNextUtcMonth(ms: number): number {
  const date = new Date(ms);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

/**
 * Splits a window into the whole UTC months inside it, named by as few labels as possible (whole
 * years, then months), and the parts of partly covered months at its two ends, which stay
 * millisecond ranges.
 */
export function splitWindow(window: { fromMs: number; toMs: number }): {
  labels: string[];
  ranges: { fromMs: number; toMs: number }[];
} {
  const firstWholeMonth = startOfUtcMonth(window.fromMs) === window.fromMs ? window.fromMs : startOfNextUtcMonth(window.fromMs);
  const endOfWholeMonths = startOfUtcMonth(window.toMs);
  if (firstWholeMonth >= endOfWholeMonths) {
    return { labels: [], ranges: window.fromMs < window.toMs ? [window] : [] };
  }
  const labels: string[] = [];
  for (let month = firstWholeMonth; month < endOfWholeMonths; ) {
    const date = new Date(month);
    const nextYear = Date.UTC(date.getUTCFullYear() + 1, 0, 1);
    if (date.getUTCMonth() === 0 && nextYear <= endOfWholeMonths) {
      labels.push(yearLabel(date));
      month = nextYear;
    } else {
      labels.push(monthLabel(date));
      month = startOfNextUtcMonth(month);
    }
  }
  const ranges = [
    { fromMs: window.fromMs, toMs: firstWholeMonth },
    { fromMs: endOfWholeMonths, toMs: window.toMs },
  ].filter((range) => range.fromMs < range.toMs);
  return { labels, ranges };
}

function anyLabelPredicate(labels: readonly string[]): string {
  return `array_has_any(filterLabels, [${sqlStringList(labels)}])`;
}

function anyDomainPredicate(domains: readonly string[]): string | null {
  const keys = [...new Set(domains.map(normalizeDomain).filter((domain) => domain.length > 0).map(reversedHostKey))];
  return keys.length === 0 ? null : anyLabelPredicate(keys);
}

/**
 * Half-open [fromMs, toMs). Whole months go by labels; the rest at each end (a window that does not
 * start or end at the start of a UTC month: rolling presets, day ranges) by a B-tree range, which
 * lists less than a month of rows. A page without a date has no date label and a NULL
 * publishedAtMs, so no window matches it.
 */
function windowPredicate(window: NonNullable<IndexQuery['window']>): string {
  if (!Number.isFinite(window.fromMs) || !Number.isFinite(window.toMs)) {
    const bounds = ['publishedAtMs IS NOT NULL'];
    if (Number.isFinite(window.fromMs)) bounds.push(`publishedAtMs >= ${window.fromMs}`);
    if (Number.isFinite(window.toMs)) bounds.push(`publishedAtMs < ${window.toMs}`);
    return bounds.join(' AND ');
  }
  const { labels, ranges } = splitWindow(window);
  const alternatives = [
    ...(labels.length > 0 ? [anyLabelPredicate(labels)] : []),
    ...ranges.map((range) => `(publishedAtMs >= ${range.fromMs} AND publishedAtMs < ${range.toMs})`),
  ];
  if (alternatives.length === 0) return 'FALSE';
  return alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join(' OR ')})`;
}

/** The WHERE clause of a query's filters, or null when it has none. */
export function filterPredicate(query: Pick<IndexQuery, 'includeDomains' | 'excludeDomains' | 'window'>): string | null {
  const clauses: string[] = [];
  const included = anyDomainPredicate(query.includeDomains);
  if (included) clauses.push(included);
  const excluded = anyDomainPredicate(query.excludeDomains);
  if (excluded) clauses.push(`NOT ${excluded}`);
  if (query.window) clauses.push(windowPredicate(query.window));
  return clauses.length > 0 ? clauses.join(' AND ') : null;
}
