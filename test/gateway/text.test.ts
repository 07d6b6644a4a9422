import test from 'ava';
import { displayUrl, leadingSentences, leadingWords, truncateCodePoints } from '../../src/gateway/text.js';
import fc from 'fast-check';
import { toIsoUtc as isoDate, utcMilliseconds } from '../../src/util/dates.js';
import { isWithinSite } from '../../src/util/domains.js';

test('truncation counts code points: astral characters are one each and never split', (t) => {
  const astral = '𝕳𝖊𝖑𝖑𝖔'; // five mathematical letters, each a surrogate pair
  t.is(astral.length, 10);
  t.is(truncateCodePoints(astral, 3), '𝕳𝖊𝖑');
  t.is(truncateCodePoints(astral, 5), astral);
  t.is(truncateCodePoints(astral, 6), astral);
  t.is(truncateCodePoints('a😀b', 2), 'a😀');
  t.is(truncateCodePoints('a😀b', 1), 'a');
});

test('leading words: a long text is cut at a word boundary within its budget, a short one kept whole', (t) => {
  t.is(leadingWords('capital of France', 100), 'capital of France');
  t.is(leadingWords('capital of France', 12), 'capital of');
  t.is(leadingWords('capital of France', 10), 'capital of', 'a cut that falls on a space keeps every word before it');
  t.is(leadingWords('anticonstitutionnellement et le reste', 10), 'anticonsti', 'one long word is cut inside');
  t.is(leadingWords('a😀 b😀 c😀', 4), 'a😀', 'code points, never half a surrogate pair');
});

test('truncation counts combining marks as code points of their own', (t) => {
  const decomposed = 'cafe\u0301!'; // "café!" with a combining acute: 6 code points
  t.is(truncateCodePoints(decomposed, 5), 'cafe\u0301');
  t.is(truncateCodePoints(decomposed, 4), 'cafe');
  const flag = '🇫🇷x'; // two regional indicators (2 code points, 4 UTF-16 units)
  t.is(truncateCodePoints(flag, 1), '🇫');
  t.is(truncateCodePoints(flag, 2), '🇫🇷');
  const family = '👨‍👩‍👧'; // man ZWJ woman ZWJ girl: 5 code points
  t.is([...truncateCodePoints(family, 3)].length, 3);
});

test('truncation keeps lone surrogates as single code points and handles edges', (t) => {
  t.is(truncateCodePoints('\ud800abc', 2), '\ud800a');
  t.is(truncateCodePoints('ab\udc00', 3), 'ab\udc00');
  t.is(truncateCodePoints('', 5), '');
  t.is(truncateCodePoints('abc', 0), '');
  const long = 'x'.repeat(100_000) + '😀';
  t.is(truncateCodePoints(long, 100_001), long);
  t.is(truncateCodePoints(long, 100_000), 'x'.repeat(100_000));
});

test('display URLs', (t) => {
  t.is(displayUrl('https://xn--mnchen-3ya.de/stra%C3%9Fe'), 'https://münchen.de/straße');
  t.is(displayUrl('http://example.com:8080/a%20b'), 'http://example.com:8080/a b');
  t.is(displayUrl('not a url'), 'not a url');
});

test('domain matching covers subdomains but not look-alikes', (t) => {
  t.true(isWithinSite('example.com', 'example.com'));
  t.true(isWithinSite('docs.example.com', 'example.com'));
  t.false(isWithinSite('badexample.com', 'example.com'));
  t.false(isWithinSite('example.com.evil.net', 'example.com'));
});

test('summaries end at a sentence when one ends late enough', (t) => {
  t.is(leadingSentences('One two.  Three four. Five six seven', 22), 'One two. Three four.');
  t.is(leadingSentences('Short text.', 100), 'Short text.');
});

test('dates become ISO 8601 UTC, the common shapes read directly and the rest through Date.parse', (t) => {
  const cases: Array<[string, string | null]> = [
    ['2024-03-01', '2024-03-01T00:00:00.000Z'],
    ['2024-03-01T10:20:30Z', '2024-03-01T10:20:30.000Z'],
    ['2024-03-01T10:20:30.5Z', '2024-03-01T10:20:30.500Z'],
    ['2024-03-01T10:20:30.1234567Z', '2024-03-01T10:20:30.123Z'],
    ['2024-03-01T10:20Z', '2024-03-01T10:20:00.000Z'],
    ['2024-03-01T01:00:00+02:00', '2024-02-29T23:00:00.000Z'],
    ['2024-03-01T01:00:00-0530', '2024-03-01T06:30:00.000Z'],
    ['2024-03-01 10:20:30Z', '2024-03-01T10:20:30.000Z'],
    ['Fri, 01 Mar 2024 10:20:30 GMT', '2024-03-01T10:20:30.000Z'],
    ['2024-03-01T10:20:30', '2024-03-01T10:20:30.000Z'],
    ['2023-02-30', null],
    ['2023-02-30T10:00:00Z', null],
    ['2024-03-01T24:30:00Z', null],
    ['yesterday', null],
    ['', null],
  ];
  for (const [input, expected] of cases) {
    const fromDateParse = Number.isNaN(Date.parse(input)) ? null : new Date(Date.parse(input)).toISOString();
    t.is(isoDate(input), expected, input);
    if (expected !== null && !input.includes(' ') && /Z|[+-]\d\d:?\d\d$|^\d{4}-\d\d-\d\d$/.test(input)) t.is(isoDate(input), fromDateParse, `${input} agrees with Date.parse`);
  }
});

test('a date already in ISO 8601 UTC reads as the general reader reads it: every such shape, valid or not', (t) => {
  const general = (value: string) => {
    const time = utcMilliseconds(value);
    return time === null ? null : new Date(time).toISOString();
  };
  const digit = fc.constantFrom(...'0123456789');
  const noisy = fc.constantFrom(...'0123456789-T:.Z /x');
  const two = (first: fc.Arbitrary<string>) => fc.tuple(first, digit).map(([a, b]) => a + b);
  const isoLike = fc
    .tuple(
      fc.constantFrom('0999', '1000', '1900', '1970', '2000', '2023', '2024', '2100', '9999'),
      two(fc.constantFrom('0', '1')),
      two(fc.constantFrom('0', '1', '2', '3')),
      two(fc.constantFrom('0', '1', '2')),
      two(fc.constantFrom(...'0123456')),
      two(fc.constantFrom(...'0123456')),
      fc.constantFrom('', '.000', '.5', '.123', '.1234'),
    )
    .map(([year, month, day, hour, minute, second, fraction]) => `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction}Z`);
  // The same shapes with one character changed to anything a date string is made of.
  const mutated = fc.tuple(isoLike, fc.nat(), noisy).map(([text, at, character]) => {
    const i = at % text.length;
    return text.slice(0, i) + character + text.slice(i + 1);
  });
  fc.assert(
    fc.property(fc.oneof(isoLike, mutated), (value) => isoDate(value) === general(value)),
    { numRuns: 20_000, seed: 22 },
  );
  t.is(isoDate('2024-02-29T23:59:59Z'), '2024-02-29T23:59:59.000Z');
  t.is(isoDate('2023-02-29T23:59:59.000Z'), null);
  t.is(isoDate('1900-02-29T00:00:00.000Z'), null);
  t.is(isoDate('2000-02-29T00:00:00.000Z'), '2000-02-29T00:00:00.000Z');
});
