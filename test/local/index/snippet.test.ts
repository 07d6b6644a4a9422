/** The pieces of the index that need no disk: snippets, word matching, filter predicates. */
import test from 'ava';
import { filterLabels, filterPredicate, hostSuffixKeys, reversedHostKey, splitWindow, sqlString } from '../../../src/local/index/filters.js';
import { buildSnippet } from '../../../src/local/index/snippet.js';
import { queryStems, StemMatcher } from '../../../src/local/index/terms.js';
import { filler } from './helpers.js';

const codePoints = (text: string) => [...text].length;
const snippetFor = (text: string, queryText: string, maxLength?: number) =>
  buildSnippet(text, new StemMatcher(queryStems(queryText)), maxLength);

test('query stems drop stop words and punctuation and fold case and accents', (t) => {
  t.deepEqual(queryStems('The Running of the Cafés!'), ['run', 'cafe']);
  t.deepEqual(queryStems('the of and'), []);
  t.deepEqual(queryStems('  ?!  '), []);
});

test('a word matches a query stem through its inflections', (t) => {
  const matcher = new StemMatcher(queryStems('connection ties'));
  t.is(matcher.match('Connected'), 0);
  t.is(matcher.match('connecting'), 0);
  t.is(matcher.match('Ties'), 1, 'a stem shorter than the prefix ("ti")');
  t.is(matcher.match('unrelated'), -1);
});

test('the snippet is the passage where the query words cluster, on word boundaries, with ellipses', (t) => {
  const text = `${filler(200)} the quokka lives on Rottnest Island and the quokka smiles ${filler(200)}`;
  const snippet = snippetFor(text, 'quokka island');
  t.true(snippet.includes('quokka lives on Rottnest Island'), snippet);
  t.true(snippet.startsWith('…') && snippet.endsWith('…'));
  t.true(codePoints(snippet) <= 250);
  t.true(codePoints(snippet) >= 200, 'uses most of its length');
  const inner = snippet.slice(1, -1);
  for (const word of inner.split(' ')) t.true(/^(river|stone|market|window|garden|letter|silver|harbor|engine|meadow|the|quokka|lives|on|Rottnest|Island|and|smiles)$/.test(word), word);
});

test('the densest cluster wins over a lone early mention', (t) => {
  const text = `quokka ${filler(150)} quokka island quokka island ${filler(150)}`;
  const snippet = snippetFor(text, 'quokka island');
  t.true(snippet.includes('quokka island quokka island'), snippet);
  t.true(snippet.startsWith('…'));
});

test('a page whose text lacks the words (a title match) gets its opening passage', (t) => {
  const text = `Opening words here. ${filler(300)}`;
  const snippet = snippetFor(text, 'quokka');
  t.true(snippet.startsWith('Opening words here.'));
  t.true(snippet.endsWith('…'));
});

test('a short text is returned whole with its whitespace collapsed', (t) => {
  t.is(snippetFor('Short\n\n text   about quokkas.', 'quokka'), 'Short text about quokkas.');
});

test('snippets count code points and never split a surrogate pair', (t) => {
  const text = `${'😀 '.repeat(300)} quokka ${'😀 '.repeat(300)}`;
  const snippet = snippetFor(text, 'quokka');
  t.true(snippet.includes('quokka'));
  t.true(codePoints(snippet) <= 250);
  t.false(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(snippet));
});

test('unspaced text is still cut to length', (t) => {
  const snippet = snippetFor('x'.repeat(5000) + 'quokka', 'quokka');
  t.true(codePoints(snippet) <= 250);
});

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
    window: { fromMs: Date.UTC(2024, 0, 1), toMs: Date.UTC(2024, 0, 2) },
  });
  t.is(
    predicate,
    "array_has_any(filterLabels, ['com.example.']) AND " +
      "NOT array_has_any(filterLabels, ['com.example.o''hara.']) AND " +
      "array_has_any(filterLabels, ['y:2024-01-01'])",
  );
});

test('pages carry their host suffixes and publication year, month and day as filter labels', (t) => {
  t.deepEqual(filterLabels('docs.example.com', Date.UTC(2024, 4, 14, 23, 59, 59, 999)), [
    'com.',
    'com.example.',
    'com.example.docs.',
    'y:2024',
    'y:2024-05',
    'y:2024-05-14',
  ]);
  t.deepEqual(filterLabels('example.com', null), ['com.', 'com.example.']);
});

test('a window splits into whole years, months and days, and millisecond ranges for partial days', (t) => {
  const utc = (...parts: [number, number, number, number?, number?]) => Date.UTC(...parts);
  t.deepEqual(splitWindow({ fromMs: utc(2020, 0, 1), toMs: utc(2027, 0, 1) }), {
    labels: ['y:2020', 'y:2021', 'y:2022', 'y:2023', 'y:2024', 'y:2025', 'y:2026'],
    ranges: [],
  });
  t.deepEqual(splitWindow({ fromMs: utc(2023, 10, 29), toMs: utc(2025, 1, 2) }), {
    labels: ['y:2023-11-29', 'y:2023-11-30', 'y:2023-12', 'y:2024', 'y:2025-01', 'y:2025-02-01'],
    ranges: [],
  });
  t.deepEqual(splitWindow({ fromMs: utc(2024, 0, 1, 12), toMs: utc(2024, 0, 3, 6) }), {
    labels: ['y:2024-01-02'],
    ranges: [
      { fromMs: utc(2024, 0, 1, 12), toMs: utc(2024, 0, 2) },
      { fromMs: utc(2024, 0, 3), toMs: utc(2024, 0, 3, 6) },
    ],
  });
  t.deepEqual(splitWindow({ fromMs: utc(2024, 0, 1, 6), toMs: utc(2024, 0, 1, 18) }), {
    labels: [],
    ranges: [{ fromMs: utc(2024, 0, 1, 6), toMs: utc(2024, 0, 1, 18) }],
  });
  t.deepEqual(splitWindow({ fromMs: utc(2024, 0, 2), toMs: utc(2024, 0, 2) }), { labels: [], ranges: [] });
});
