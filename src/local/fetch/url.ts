/**
 * URL identity for the local index: two spellings of one page must map to one key, so the crawler's
 * seen set and the index's canonicalUrl agree however a link was written.
 */

import { hostWithoutWww, isWithinSite } from '../../util/domains.js';

export { hostWithoutWww, isWithinSite };

/** Query parameters that only say how a visitor arrived; they never change what a page shows. */
const TRACKING_PARAMETER = /^(utm_[a-z0-9_]*|gclid|gclsrc|dclid|fbclid|msclkid|yclid|mc_cid|mc_eid|igshid|_ga|_gl)$/i;

export function isTrackingParameter(name: string): boolean {
  return TRACKING_PARAMETER.test(name);
}

/** RFC 3986 §2.3: percent-escapes of these are equivalent to the character itself. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * Lower-case scheme and host, no default port, no fragment, no tracking parameters, the remaining
 * query parameters sorted by name (values of a repeated name keep their order), percent-escapes in
 * one case. The path's trailing slash is kept as written: `/docs` and `/docs/` can be different
 * pages. Throws TypeError on a string that is not an absolute URL (or relative to `base`).
 */
export function normalizeUrl(input: string | URL, base?: string | URL): string {
  const url = new URL(input, base);
  url.hash = '';
  // WHATWG parsing already lower-cases the scheme and host and drops default ports; a fully
  // qualified host's trailing dot is the same host.
  if (url.hostname.endsWith('.')) url.hostname = url.hostname.replace(/\.+$/, '');
  url.pathname = normalizePercentEscapes(url.pathname);
  url.search = normalizeQuery(url.search);
  return url.href;
}

/** normalizeUrl for links found in pages: null for anything but an http(s) URL. */
export function normalizeHttpUrl(input: string, base?: string | URL): string | null {
  try {
    const normalized = normalizeUrl(input.trim(), base);
    return isHttpUrl(normalized) ? normalized : null;
  } catch {
    return null;
  }
}

/** An http(s) address as a URL, resolved against base when one is given; null for anything else. */
export function httpAddress(href: string | undefined, base?: string | URL): URL | null {
  if (href === undefined) return null;
  try {
    const url = new URL(href, base);
    return isHttpUrl(url) ? url : null;
  } catch {
    return null;
  }
}

export function isHttpUrl(url: string | URL): boolean {
  const protocol = typeof url === 'string' ? safeProtocol(url) : url.protocol;
  return protocol === 'http:' || protocol === 'https:';
}

/** The index's `domain`: the lower-case host without a leading "www.". */
export function domainOf(url: string | URL): string {
  return hostWithoutWww(new URL(url).hostname);
}

function safeProtocol(url: string): string | null {
  try {
    return new URL(url).protocol;
  } catch {
    return null;
  }
}

function normalizeQuery(search: string): string {
  if (search.length <= 1) return '';
  // Sorted as raw text rather than through URLSearchParams: re-serializing would turn %20 into +
  // and escape characters the server may read differently.
  const parameters = search
    .slice(1)
    .split('&')
    .filter((parameter) => parameter !== '')
    .map((parameter) => normalizePercentEscapes(parameter))
    .filter((parameter) => !isTrackingParameter(parameterName(parameter)));
  if (parameters.length === 0) return '';
  const sorted = parameters
    .map((parameter, position) => ({ parameter, position, name: parameterName(parameter) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.position - b.position))
    .map(({ parameter }) => parameter);
  return `?${sorted.join('&')}`;
}

function parameterName(parameter: string): string {
  const equals = parameter.indexOf('=');
  return equals === -1 ? parameter : parameter.slice(0, equals);
}

function normalizePercentEscapes(text: string): string {
  return text.replace(/%[0-9a-fA-F]{2}/g, (escape) => {
    const character = String.fromCharCode(parseInt(escape.slice(1), 16));
    return UNRESERVED.test(character) ? character : escape.toUpperCase();
  });
}

