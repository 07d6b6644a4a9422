/**
 * freshness: presets, a single UTC day, or an inclusive UTC day range (spec §2.1).
 * A window is half-open [fromMs, toMs) so that day boundaries need no end-of-day arithmetic.
 */
export const FRESHNESS_PATTERN =
  '^(noLimit|oneDay|oneWeek|oneMonth|oneYear|[0-9]{4}-[0-9]{2}-[0-9]{2}(\\.\\.[0-9]{4}-[0-9]{2}-[0-9]{2})?)$';
const freshnessRegExp = new RegExp(FRESHNESS_PATTERN);

export type FreshnessPreset = 'oneDay' | 'oneWeek' | 'oneMonth' | 'oneYear';

const DAY_MS = 86_400_000;
/** Preset lengths. A month is 31 days and a year 366 so that a preset never misses a page its name promises. */
export const PRESET_SPAN_MS: Record<FreshnessPreset, number> = {
  oneDay: DAY_MS,
  oneWeek: 7 * DAY_MS,
  oneMonth: 31 * DAY_MS,
  oneYear: 366 * DAY_MS,
};

export type Freshness =
  | { kind: 'none'; raw: 'noLimit' }
  | { kind: 'preset'; raw: FreshnessPreset; preset: FreshnessPreset }
  | { kind: 'dates'; raw: string; startDay: string; endDay: string; fromMs: number; toMs: number };

export interface DateWindow {
  fromMs: number;
  toMs: number;
}

/** Milliseconds of 00:00 UTC on a YYYY-MM-DD day, or null when it is not a real calendar date. */
export function utcDayStart(day: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!match) return null;
  const [year, month, date] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // setUTCFullYear, unlike Date.UTC, does not map years 0-99 onto the 1900s.
  const probe = new Date(0);
  probe.setUTCFullYear(year, month - 1, date);
  if (probe.getUTCFullYear() !== year || probe.getUTCMonth() !== month - 1 || probe.getUTCDate() !== date) {
    return null;
  }
  return probe.getTime();
}

/** Why a freshness value is unacceptable, or null when it is fine. Used for the 400 message. */
export function freshnessProblem(value: string): string | null {
  if (!freshnessRegExp.test(value)) {
    return 'freshness must be noLimit, oneDay, oneWeek, oneMonth, oneYear, YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD';
  }
  if (!/^\d/.test(value)) return null;
  const [start, end = start] = value.split('..') as [string, string?];
  const startMs = utcDayStart(start);
  if (startMs === null) return `freshness: ${start} is not a valid calendar date`;
  const endMs = utcDayStart(end);
  if (endMs === null) return `freshness: ${end} is not a valid calendar date`;
  if (startMs > endMs) return `freshness: the range start ${start} is after its end ${end}`;
  return null;
}

/** Parses a value that already passed validation. */
export function parseFreshness(value: string): Freshness {
  if (value === 'noLimit') return { kind: 'none', raw: 'noLimit' };
  if (!/^\d/.test(value)) return { kind: 'preset', raw: value as FreshnessPreset, preset: value as FreshnessPreset };
  const [startDay, endDay = startDay] = value.split('..') as [string, string?];
  const fromMs = utcDayStart(startDay)!;
  const toMs = utcDayStart(endDay)! + DAY_MS;
  return { kind: 'dates', raw: value, startDay, endDay, fromMs, toMs };
}

/** The concrete window at a given instant; null for noLimit. Presets end at +infinity: a page dated a little ahead of our clock still counts as fresh. */
export function freshnessWindow(freshness: Freshness, nowMs: number): DateWindow | null {
  switch (freshness.kind) {
    case 'none':
      return null;
    case 'preset':
      return { fromMs: nowMs - PRESET_SPAN_MS[freshness.preset], toMs: Number.POSITIVE_INFINITY };
    case 'dates':
      return { fromMs: freshness.fromMs, toMs: freshness.toMs };
  }
}
