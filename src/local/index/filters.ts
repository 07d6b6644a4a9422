/**
 * Filters as SQL predicates that LanceDB evaluates inside the search, as a pre-filter served by
 * scalar indexes, so a filtered query still returns its top hits instead of the survivors of an
 * unfiltered top-k.
 *
 * Each page carries filter labels in a label-list (bitmap) column: its host and parent domains as
 * reversed host keys, and its publication year, month and day. A filter is then a union or
 * complement of a few bitmaps. Range predicates over B-trees had to list every row in range: at
 * 243k pages excluding the three biggest domains cost ~10 ms per query that way, ~0.2 ms as labels.
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

const DAY_MS = 86_400_000;

// Date labels contain ":", which no host key does, so the two kinds never collide.
const yearLabel = (date: Date) => `y:${date.getUTCFullYear()}`;
const monthLabel = (date: Date) => `${yearLabel(date)}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
const dayLabel = (date: Date) => `${monthLabel(date)}-${String(date.getUTCDate()).padStart(2, '0')}`;

/** The publication year, month and day (UTC) of a page, e.g. "y:2024", "y:2024-05", "y:2024-05-14". */
export function publicationLabels(publishedAtMs: number | null): string[] {
  if (publishedAtMs === null) return [];
  const date = new Date(publishedAtMs);
  return [yearLabel(date), monthLabel(date), dayLabel(date)];
}

/** Every filter label of a page: host suffix keys and publication date labels. */
export function filterLabels(domain: string, publishedAtMs: number | null): string[] {
  return [...hostSuffixKeys(domain), ...publicationLabels(publishedAtMs)];
}

const startOfUtcDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/**
 * Splits a window into the whole UTC days inside it, named by as few labels as possible (whole
 * years, then whole months, then days), and the pieces of partly covered days at its two ends,
 * which stay millisecond ranges.
 */
export function splitWindow(window: { fromMs: number; toMs: number }): {
  labels: string[];
  ranges: { fromMs: number; toMs: number }[];
} {
  const firstWholeDay = Math.ceil(window.fromMs / DAY_MS) * DAY_MS;
  const endOfWholeDays = startOfUtcDay(window.toMs);
  if (firstWholeDay >= endOfWholeDays) {
    return { labels: [], ranges: window.fromMs < window.toMs ? [window] : [] };
  }
  const labels: string[] = [];
  for (let day = firstWholeDay; day < endOfWholeDays; ) {
    const date = new Date(day);
    const nextYear = Date.UTC(date.getUTCFullYear() + 1, 0, 1);
    const nextMonth = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
    if (date.getUTCMonth() === 0 && date.getUTCDate() === 1 && nextYear <= endOfWholeDays) {
      labels.push(yearLabel(date));
      day = nextYear;
    } else if (date.getUTCDate() === 1 && nextMonth <= endOfWholeDays) {
      labels.push(monthLabel(date));
      day = nextMonth;
    } else {
      labels.push(dayLabel(date));
      day += DAY_MS;
    }
  }
  const ranges = [
    { fromMs: window.fromMs, toMs: firstWholeDay },
    { fromMs: endOfWholeDays, toMs: window.toMs },
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
 * Half-open [fromMs, toMs). Whole days go by labels; the ends of a window that does not start or end
 * at midnight UTC (the rolling presets) by a B-tree range, which is cheap over less than a day. A
 * page without a date has no date label and a NULL publishedAtMs, so no window matches it.
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
