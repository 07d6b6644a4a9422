/** Text and URL shaping shared by every provider's results. */
import { domainToUnicode } from 'node:url';
import { hostWithoutWww } from '../util/domains.js';

/**
 * The first `max` Unicode code points of `text` (spec §2.1: characters, not UTF-16 units, not
 * bytes). A surrogate pair is one code point and is never split; combining marks count on their own.
 */
export function truncateCodePoints(text: string, max: number): string {
  // A string's UTF-16 length is an upper bound on its code points.
  if (text.length <= max) return text;
  let index = 0;
  for (let taken = 0; taken < max && index < text.length; taken++) {
    const unit = text.charCodeAt(index);
    const isPair =
      unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
    index += isPair ? 2 : 1;
  }
  return text.slice(0, index);
}

/**
 * The first `maxCodePoints` code points of `text`, cut back to the last whitespace when one is in
 * the second half, so that a long text loses whole words rather than half of one.
 */
export function leadingWords(text: string, maxCodePoints: number): string {
  const cut = truncateCodePoints(text, maxCodePoints);
  if (cut.length === text.length || /\s/.test(text[cut.length]!)) return cut;
  const lastSpace = cut.search(/\s\S*$/);
  return lastSpace > cut.length / 2 ? cut.slice(0, lastSpace) : cut;
}

/** The URL as a person reads it: punycode host shown in Unicode, percent-escapes decoded where they form UTF-8. */
export function displayUrl(url: string): string {
  // Most URLs have nothing to decode; parsing them would only cost time.
  if (!url.includes('%') && !url.includes('xn--')) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const host = domainToUnicode(parsed.hostname) || parsed.hostname;
  const port = parsed.port ? `:${parsed.port}` : '';
  return `${parsed.protocol}//${host}${port}${decodePercentEscapes(parsed.pathname + parsed.search + parsed.hash)}`;
}

function decodePercentEscapes(value: string): string {
  try {
    return decodeURI(value);
  } catch {
    // One bad escape must not keep the others encoded: decode each run of escapes on its own.
    return value.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURI(run);
      } catch {
        return run;
      }
    });
  }
}

/** The host a domain filter compares against: lower case, without a leading "www.". */
export function hostOf(url: string): string | null {
  try {
    return hostWithoutWww(new URL(url).hostname);
  } catch {
    return null;
  }
}

/** A short extract for `summary` when the upstream has none: whole sentences up to a budget. */
export function leadingSentences(text: string, maxCodePoints: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const cut = truncateCodePoints(flat, maxCodePoints);
  if (cut.length === flat.length) return cut;
  const lastStop = Math.max(cut.lastIndexOf('. '), cut.lastIndexOf('! '), cut.lastIndexOf('? '));
  return lastStop > cut.length / 2 ? cut.slice(0, lastStop + 1) : cut;
}
