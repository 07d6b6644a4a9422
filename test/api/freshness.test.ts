import test from 'ava';
import { freshnessProblem, freshnessWindow, parseFreshness, utcDayStart } from '../../src/api/freshness.js';

test('calendar validity, leap years included', (t) => {
  t.is(freshnessProblem('2024-02-29'), null);
  t.is(freshnessProblem('2000-02-29'), null);
  t.regex(freshnessProblem('1900-02-29')!, /not a valid calendar date/);
  t.regex(freshnessProblem('2023-02-29')!, /not a valid calendar date/);
  t.regex(freshnessProblem('2023-00-10')!, /not a valid calendar date/);
  t.regex(freshnessProblem('2023-01-00')!, /not a valid calendar date/);
  t.regex(freshnessProblem('2023-01-32')!, /not a valid calendar date/);
  t.is(freshnessProblem('0099-01-01'), null);
  t.is(utcDayStart('0099-01-01'), Date.parse('0099-01-01T00:00:00Z'));
});

test('windows are half-open UTC days; presets look back from now', (t) => {
  const day = parseFreshness('2024-03-10');
  t.deepEqual(freshnessWindow(day, 0), { fromMs: Date.parse('2024-03-10T00:00:00Z'), toMs: Date.parse('2024-03-11T00:00:00Z') });
  const range = parseFreshness('2024-02-28..2024-03-01');
  t.deepEqual(freshnessWindow(range, 0), { fromMs: Date.parse('2024-02-28T00:00:00Z'), toMs: Date.parse('2024-03-02T00:00:00Z') });
  const now = Date.parse('2025-01-08T12:00:00Z');
  t.is(freshnessWindow(parseFreshness('oneDay'), now)!.fromMs, Date.parse('2025-01-07T12:00:00Z'));
  t.is(freshnessWindow(parseFreshness('oneWeek'), now)!.fromMs, Date.parse('2025-01-01T12:00:00Z'));
  t.is(freshnessWindow(parseFreshness('noLimit'), now), null);
});
