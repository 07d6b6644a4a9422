/**
 * One date reader for the whole product: upstream replies, page metadata and ingested records all
 * become ISO 8601 UTC the same way. A value without a zone is read as UTC, whatever this server's
 * time zone.
 */

/** The ISO-like shapes publishers and APIs send: dashes and colons optional, "Z", "UTC", "GMT" or an offset. */
const ISO_LIKE =
  /^(\d{4})-?(\d{2})-?(\d{2})(?:[T\s](\d{2}):?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?$/i;
const HAS_ZONE = /(\b(?:UTC|GMT|Z)\b|[+-]\d{2}:?\d{2}$|\b[ECMP][SD]T\b)/i;

/** Epoch milliseconds of a date string, or null when it is not a date (2023-02-30 is not). */
export function utcMilliseconds(value: string | null | undefined): number | null {
  const text = value?.trim();
  if (!text) return null;
  // Read directly: Date.parse is slow on the hot path, and reads zone-less values in local time.
  const iso = ISO_LIKE.exec(text);
  if (iso) {
    const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '0', zone] = iso;
    const [h, m, s] = [Number(hour), Number(minute), Number(second)];
    if (Number(month) < 1 || Number(month) > 12 || h > 24 || (h === 24 && (m > 0 || s > 0)) || m > 59 || s > 60) return null;
    const time = Date.UTC(Number(year), Number(month) - 1, Number(day), h, m, s, Math.round(Number(`0.${fraction}`) * 1000));
    // Date.UTC rolls 2023-02-30 over into March; a date that does not exist is not a date.
    const dayStart = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
    if (dayStart.getUTCDate() !== Number(day)) return null;
    return time - zoneOffsetMs(zone);
  }
  // RFC 2822 and "November 19, 2019 10:07 AM" forms: V8 reads them, in local time unless told.
  const parsed = Date.parse(HAS_ZONE.test(text) ? text : `${text} UTC`);
  return Number.isNaN(parsed) ? null : parsed;
}

/** ISO 8601 in UTC, or null for a value that is not a date. */
export function toIsoUtc(value: string | null | undefined): string | null {
  if (value != null) {
    const canonical = alreadyIsoUtc(value);
    if (canonical !== null) return canonical;
  }
  const time = utcMilliseconds(value);
  return time === null ? null : new Date(time).toISOString();
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * A value that is already what toISOString would write for it, `YYYY-MM-DDTHH:MM:SS.sssZ`, or that
 * less its milliseconds: that string; null for anything else, which the general reader then takes.
 * Search replies carry ten such dates each, and reading one through Date and back cost about a
 * microsecond (docs/benchmarks.md, "Gateway overhead"). Read digit by digit: a regular expression's
 * match allocates an array and a string per field.
 */
function alreadyIsoUtc(text: string): string | null {
  const length = text.length;
  if (length !== 20 && length !== 24) return null;
  if (text.charCodeAt(length - 1) !== 90 /* Z */ || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 84 /* T */) return null;
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58 || (length === 24 && text.charCodeAt(19) !== 46)) return null;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (length === 24 && digits(text, 20, 3) < 0) return null;
  // Years before 1000 and leap seconds are left to the general reader, which has its own rules for them.
  if (year < 1000 || month < 1 || month > 12 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  const leap = month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day < 1 || day > DAYS_IN_MONTH[month - 1]! + (leap ? 1 : 0)) return null;
  return length === 24 ? text : `${text.slice(0, 19)}.000Z`;
}

/** The number `count` ASCII digits at `start` spell, or -1 when one of them is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

const UNIT_MS: Record<string, number> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
  year: 365 * 86_400_000,
};
const UNIT_ABBREVIATIONS: Record<string, string> = { sec: 'second', min: 'minute', hr: 'hour' };
const RELATIVE_AGE = /^(an?|\d+)\s+(second|sec|minute|min|hour|hr|day|week|month|year)s?\s+ago$/i;

/**
 * A date as search engines show it, in ISO 8601 UTC: absolute dates as toIsoUtc reads them, ages
 * ("3 days ago", "an hour ago", "yesterday") as an instant against `nowMs`, the request's clock,
 * since an age only means something at the moment of the reply. Anything else is null.
 */
export function shownDateToIsoUtc(value: unknown, nowMs: number): string | null {
  const text = typeof value === 'string' ? value.trim() : '';
  if (/^yesterday$/i.test(text)) return new Date(nowMs - UNIT_MS.day!).toISOString();
  const age = RELATIVE_AGE.exec(text);
  if (!age) return toIsoUtc(text);
  const amount = /^an?$/i.test(age[1]!) ? 1 : Number(age[1]);
  const unit = age[2]!.toLowerCase();
  return new Date(nowMs - amount * UNIT_MS[UNIT_ABBREVIATIONS[unit] ?? unit]!).toISOString();
}

function zoneOffsetMs(zone: string | undefined): number {
  const match = zone ? /^([+-])(\d{2}):?(\d{2})?$/.exec(zone) : null;
  if (!match) return 0;
  return (Number(match[2]) * 60 + Number(match[3] ?? 0)) * (match[1] === '-' ? -1 : 1) * 60_000;
}
