/** Filter labels and the predicates built from them (no disk; index.test.ts runs them on an index). */
import test from 'ava';
import { filterLabels, filterPredicate, hostSuffixKeys, publicationLabels, reversedHostKey, splitWindow, sqlString } from '../../../src/local/index/filters.js';

const at = (iso: string) => Date.parse(iso);

test("a page's host suffix keys hold its domain's key when it is that domain or a subdomain, and only then", (t) => {
  t.is(reversedHostKey('docs.example.com'), 'com.example.docs.');
  t.is(reversedHostKey('WWW.Example.COM.'), 'com.example.');
  t.deepEqual(hostSuffixKeys('docs.example.com'), ['com.', 'com.example.', 'com.example.docs.']);
  t.true(hostSuffixKeys('a.b.example.com').includes(reversedHostKey('example.com')));
  t.true(hostSuffixKeys('example.com').includes(reversedHostKey('www.example.com')));
  t.false(hostSuffixKeys('badexample.com').includes(reversedHostKey('example.com')));
  t.false(hostSuffixKeys('example.com').includes(reversedHostKey('docs.example.com')));
});

test('filter predicates quote literals and combine include, exclude and the date window', (t) => {
  t.is(sqlString("it's"), "'it''s'");
  t.is(filterPredicate({ includeDomains: [], excludeDomains: [], window: null }), null);
  const predicate = filterPredicate({
    includeDomains: ['example.com', ' '],
    excludeDomains: ["o'hara.example.com"],
    window: { fromMs: at('2023-12-15T00:00:00.000Z'), toMs: at('2024-02-10T00:00:00.000Z') },
  });
  t.is(
    predicate,
    "array_has_any(filterLabels, ['com.example.']) AND " +
      "NOT array_has_any(filterLabels, ['com.example.o''hara.']) AND " +
      "(array_has_any(filterLabels, ['y:2024-01']) OR " +
      `(publishedAtMs >= ${at('2023-12-15T00:00:00.000Z')} AND publishedAtMs < ${at('2024-01-01T00:00:00.000Z')}) OR ` +
      `(publishedAtMs >= ${at('2024-02-01T00:00:00.000Z')} AND publishedAtMs < ${at('2024-02-10T00:00:00.000Z')}))`,
  );
  t.is(
    filterPredicate({ includeDomains: [], excludeDomains: [], window: { fromMs: at('2024-01-01T00:00:00.000Z'), toMs: at('2024-01-02T00:00:00.000Z') } }),
    `(publishedAtMs >= ${at('2024-01-01T00:00:00.000Z')} AND publishedAtMs < ${at('2024-01-02T00:00:00.000Z')})`,
  );
});

test('a page is labelled with its publication year and month, not its day: day labels made a fold cost one store request per day', (t) => {
  t.deepEqual(publicationLabels(at('2024-05-14T09:30:00.000Z')), ['y:2024', 'y:2024-05']);
  t.deepEqual(filterLabels('docs.example.com', at('2024-12-31T23:59:59.999Z')), ['com.', 'com.example.', 'com.example.docs.', 'y:2024', 'y:2024-12']);
  t.deepEqual(publicationLabels(null), []);
  t.deepEqual(filterLabels('example.com', null), ['com.', 'com.example.']);
});

test('whole months inside a window become labels, years where whole; the partly covered months at each end stay ranges', (t) => {
  const window = { fromMs: at('2023-11-14T00:00:00.000Z'), toMs: at('2025-02-03T06:00:00.000Z') };
  t.deepEqual(splitWindow(window), {
    labels: ['y:2023-12', 'y:2024', 'y:2025-01'],
    ranges: [
      { fromMs: window.fromMs, toMs: at('2023-12-01T00:00:00.000Z') },
      { fromMs: at('2025-02-01T00:00:00.000Z'), toMs: window.toMs },
    ],
  });
});

test('a window from the first instant of a month to the first of another is labels alone', (t) => {
  t.deepEqual(splitWindow({ fromMs: at('2024-02-01T00:00:00.000Z'), toMs: at('2024-04-01T00:00:00.000Z') }), {
    labels: ['y:2024-02', 'y:2024-03'],
    ranges: [],
  });
  t.deepEqual(splitWindow({ fromMs: at('2020-01-01T00:00:00.000Z'), toMs: at('2027-01-01T00:00:00.000Z') }).labels, [
    'y:2020', 'y:2021', 'y:2022', 'y:2023', 'y:2024', 'y:2025', 'y:2026',
  ]);
});

test('a window within one month, or across one month boundary without a whole month, is one range', (t) => {
  const rollingWeek = { fromMs: at('2024-02-26T13:00:00.000Z'), toMs: at('2024-03-04T13:00:00.000Z') };
  t.deepEqual(splitWindow(rollingWeek), { labels: [], ranges: [rollingWeek] });
  const oneMillisecondShort = { fromMs: at('2024-02-01T00:00:00.001Z'), toMs: at('2024-03-01T00:00:00.000Z') };
  t.deepEqual(splitWindow(oneMillisecondShort), { labels: [], ranges: [oneMillisecondShort] });
  t.deepEqual(splitWindow({ fromMs: 5, toMs: 5 }), { labels: [], ranges: [] });
});
