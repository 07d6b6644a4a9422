/**
 * Sitemaps (sitemaps.org): a <urlset> lists pages, a <sitemapindex> lists more sitemaps, either may
 * be gzipped (.xml.gz), and a plain-text sitemap is one URL per line.
 */
import { DOMParser } from 'linkedom';
import { normalizeHttpUrl, readCappedBody } from '../fetch/index.js';

/** The protocol's own limit on an uncompressed sitemap: a gzipped one may not inflate past it. */
const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;

export interface SitemapEntries {
  pages: string[];
  sitemaps: string[];
}

export async function readSitemap(body: Buffer, url: string, signal?: AbortSignal): Promise<SitemapEntries> {
  const isGzip = body[0] === 0x1f && body[1] === 0x8b;
  const bytes = isGzip ? await readCappedBody([body], ['gzip'], { maxBytes: Infinity, maxDecodedBytes: MAX_SITEMAP_BYTES }, url, signal) : body;
  return parseSitemap(bytes.toString('utf8'), url);
}

export function parseSitemap(text: string, url: string): SitemapEntries {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  if (!trimmed.startsWith('<')) {
    return { pages: uniqueUrls(trimmed.split(/\r?\n/), url), sitemaps: [] };
  }
  const document = new DOMParser().parseFromString(trimmed, 'text/xml');
  const locs = (selector: string) => [...document.querySelectorAll(selector)].map((loc) => loc.textContent ?? '');
  if (document.documentElement?.localName === 'sitemapindex') {
    return { pages: [], sitemaps: uniqueUrls(locs('sitemap > loc'), url) };
  }
  return { pages: uniqueUrls(locs('url > loc'), url), sitemaps: [] };
}

function uniqueUrls(candidates: string[], base: string): string[] {
  const urls = new Set<string>();
  for (const candidate of candidates) {
    if (candidate.trim() === '') continue;
    const url = normalizeHttpUrl(candidate, base);
    if (url) urls.add(url);
  }
  return [...urls];
}
