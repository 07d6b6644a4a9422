/** Snippets and word matching: pieces of the index that need no disk. */
import test from 'ava';
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
