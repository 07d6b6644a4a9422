import test from 'ava';
import { stemmer } from 'stemmer';
import { recentStemsHeld, stemWord } from '../../../src/local/index/terms.js';

test('stems are cached up to a bound in characters as well as words, and overlong words are not cached', (t) => {
  t.is(stemWord('Running'), 'run');
  // 100,000 distinct words of 40 letters: 4 million characters, which the old bound (in words) kept.
  for (let i = 0; i < 100_000; i++) stemWord(`${'w'.repeat(34)}${i.toString(36).padStart(6, 'a')}`);
  const held = recentStemsHeld();
  t.true(held.characters <= 2_000_080, `characters held: ${held.characters}`);
  t.true(held.words < 100_000, `words held: ${held.words}`);
  const before = recentStemsHeld();
  const long = `${'walk'.repeat(1000)}ing`;
  t.true(stemWord(long) === stemmer(long), 'a long word is still stemmed');
  t.deepEqual(recentStemsHeld(), before, 'but not kept');
});
