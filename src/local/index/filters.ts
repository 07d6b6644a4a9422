/**
 * Filters as SQL predicates that LanceDB evaluates inside the search (a pre-filter served by the
 * B-tree indexes on domainKey and publishedAtMs), so a filtered query still returns its top hits
 * instead of the survivors of an unfiltered top-k.
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
 * Every key with the prefix sorts in [prefix, prefix with its final "." raised to "/"): "/" is the
 * character right after "." in byte order, so a range scan of the B-tree replaces a LIKE.
 */
function subdomainPredicate(domain: string): string {
  const key = reversedHostKey(domain);
  const upperBound = key.slice(0, -1) + '/';
  return `(domainKey >= ${sqlString(key)} AND domainKey < ${sqlString(upperBound)})`;
}

function anyDomainPredicate(domains: readonly string[]): string | null {
  const usable = [...new Set(domains.map(normalizeDomain).filter((domain) => domain.length > 0))];
  if (usable.length === 0) return null;
  return `(${usable.map(subdomainPredicate).join(' OR ')})`;
}

/** Half-open [fromMs, toMs); a page without a date has a NULL publishedAtMs, which no comparison matches. */
function windowPredicate(window: NonNullable<IndexQuery['window']>): string {
  const bounds: string[] = [];
  if (Number.isFinite(window.fromMs)) bounds.push(`publishedAtMs >= ${window.fromMs}`);
  if (Number.isFinite(window.toMs)) bounds.push(`publishedAtMs < ${window.toMs}`);
  // An unbounded window still asks for a date.
  if (bounds.length === 0) bounds.push('publishedAtMs IS NOT NULL');
  return bounds.join(' AND ');
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
