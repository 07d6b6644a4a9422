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

/** The shapes upstreams send most: a date, or a date-time, in UTC, with an offset or with no zone. */
const COMMON_ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * ISO 8601 in UTC, or null for a value that is not a date. A date-time without a zone is taken as
 * UTC, whatever this server's time zone.
 */
export function isoDate(value: string | null | undefined): string | null {
  if (!value) return null;
  // Date.parse is slow on the hot path; the common shapes are read directly.
  const match = COMMON_ISO.exec(value);
  if (match) {
    const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '0', zone] = match;
    const dayMs = Date.UTC(Number(year), Number(month) - 1, Number(day));
    const dayDate = new Date(dayMs);
    // Date.UTC rolls 2023-02-30 over into March: such a value is not a date.
    if (dayDate.getUTCMonth() !== Number(month) - 1 || dayDate.getUTCDate() !== Number(day)) return null;
    if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
    let ms = dayMs + ((Number(hour) * 60 + Number(minute)) * 60 + Number(second)) * 1000 + Number(fraction.slice(0, 3).padEnd(3, '0'));
    if (zone && zone !== 'Z') {
      const sign = zone[0] === '-' ? -1 : 1;
      const digits = zone.slice(1).replace(':', '');
      ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
    }
    return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
  }
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
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
