/**
 * From an extracted page to the document the index stores. Every source (crawl, JSONL, WARC) goes
 * through here, so identity (canonicalUrl), domain and content hash are computed one way.
 */
import { createHash } from 'node:crypto';
import { domainOf, isWithinSite, normalizeHttpUrl, normalizeUrl } from '../fetch/url.js';
import type { ExtractedPage, IndexedPage } from '../types.js';

/** Longest title made up from the text when a page has none. */
const FALLBACK_TITLE_LENGTH = 120;

export interface PageSource {
  /** Where the page was fetched from (after redirects). */
  url: string;
  /** ISO 8601. */
  fetchedAt: string;
}

/** Null when the page has nothing to index: a challenge interstitial or no text. */
export function toIndexedPage(extracted: ExtractedPage, source: PageSource): IndexedPage | null {
  if (extracted.isChallenge) return null;
  const text = extracted.text.trim();
  if (text === '') return null;
  return {
    url: source.url,
    canonicalUrl: canonicalUrlOf(source.url, extracted.canonicalUrl),
    title: extracted.title?.trim() || fallbackTitle(text),
    text,
    datePublished: extracted.datePublished,
    domain: domainOf(source.url),
    language: extracted.language,
    fetchedAt: source.fetchedAt,
    contentHash: contentHash(text),
    ...(extracted.markdown ? { markdown: extracted.markdown } : {}),
  };
}

/**
 * The page's declared canonical when it stays on the same site, else its own normalized URL. A
 * canonical on another site is ignored: honouring it would let any page overwrite another site's
 * entry in the index by naming it.
 */
export function canonicalUrlOf(url: string, declaredCanonical: string | null): string {
  const own = normalizeUrl(url);
  const canonical = declaredCanonical ? normalizeHttpUrl(declaredCanonical, url) : null;
  if (!canonical) return own;
  const [canonicalHost, ownHost] = [new URL(canonical).hostname, new URL(own).hostname];
  // Either direction: blog.example.com may name www.example.com/blog/… and the other way round.
  return isWithinSite(canonicalHost, ownHost) || isWithinSite(ownHost, canonicalHost) ? canonical : own;
}

/**
 * SHA-256 hex of the text with case, Unicode compatibility forms and whitespace evened out, so that
 * the same article under two URLs, or re-wrapped in different markup, hashes the same.
 */
export function contentHash(text: string): string {
  const normalized = text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim();
  return createHash('sha256').update(normalized).digest('hex');
}

function fallbackTitle(text: string): string {
  const firstLine = text.split('\n', 1)[0]!.trim();
  const codePoints = [...firstLine];
  return codePoints.length <= FALLBACK_TITLE_LENGTH ? firstLine : `${codePoints.slice(0, FALLBACK_TITLE_LENGTH - 1).join('')}…`;
}
