/** The extraction-dev scorer (bench/extraction-dev.ts), a port of the set's score.py, on hand-made strings. */
import test from 'ava';
import { groupScores, scoreTitle, titleScores, type DevPage } from '../../../bench/extraction-dev.js';
import { aggregateScore, cjkAwareTokens, compareTexts, wordTokens } from '../../../bench/extraction-score.js';

test('CJK characters are one token each; everything else is \\w+ runs, as in Zyte\'s scorer', (t) => {
  t.deepEqual(cjkAwareTokens('港口节日 returns_2024, café!'), ['港', '口', '节', '日', 'returns_2024', 'café']);
  t.deepEqual(cjkAwareTokens('ひらがなとカタカナ'), ['ひ', 'ら', 'が', 'な', 'と', 'カ', 'タ', 'カ', 'ナ']);
  t.deepEqual(cjkAwareTokens('한국어abc'), ['한', '국', '어', 'abc']);
  const latin = 'The harbour festival — 20,000 visitors; naïve café-goers.';
  t.deepEqual(cjkAwareTokens(latin), wordTokens(latin));
  // Zyte's \w+ keeps a CJK run whole: one wrong character would cost all of it.
  t.deepEqual(wordTokens('港口节日'), ['港口节日']);
});

test('one differing CJK character costs the shingles that hold it, not the whole sentence', (t) => {
  const truth = '今天港口举行节日活动';
  const predicted = '今天港口举办节日活动';
  // 10 characters → 7 shingles each; the changed 6th character sits in 4 of them.
  t.deepEqual(compareTexts(truth, predicted, cjkAwareTokens), { tp: 3 / 11, fp: 4 / 11, fn: 4 / 11 });
  t.deepEqual(compareTexts(truth, predicted, wordTokens), { tp: 0, fp: 0.5, fn: 0.5 });
});

const page = (id: string, fields: Partial<DevPage>): DevPage => ({
  id,
  source: 'wcxb',
  type: 'article',
  lang: 'en',
  split: 'report',
  url: null,
  truth: '',
  truthKind: 'annotated',
  title: null,
  ...fields,
});

test('groups are score.py\'s: all, all without Readability\'s own outputs, then per source, type and language', (t) => {
  const pages = [
    page('a', { source: 'wcxb', type: 'forum' }),
    page('b', { source: 'readability', truthKind: 'readability-output' }),
    page('c', { source: 'cwce', lang: 'zh' }),
  ];
  const counts = [
    { tp: 0.5, fp: 0, fn: 0.5 },
    { tp: 1, fp: 0, fn: 0 },
    { tp: 0, fp: 0, fn: 1 },
  ];
  const report = groupScores(pages, counts);
  t.deepEqual(report.all.all, { ...aggregateScore(counts), pages: 3 });
  t.deepEqual(report.all['excluding readability-output'], { ...aggregateScore([counts[0]!, counts[2]!]), pages: 2 });
  t.deepEqual(Object.keys(report.source).sort(), ['cwce', 'readability', 'wcxb']);
  t.deepEqual(report.type.forum, { ...aggregateScore([counts[0]!]), pages: 1 });
  t.deepEqual(report.type.article!.pages, 2);
  // An empty prediction has no precision to measure: page c counts only towards recall.
  t.deepEqual(report.lang.zh, { f1: 0, precision: 0, recall: 0, pages: 1 });
  t.is(report.lang.en!.precision, 1);
  t.is(report.lang.en!.recall, (0.5 + 1) / 2);
});

test('titles are scored on the pages that have one: the same words whatever their case, and the F1 of the words', (t) => {
  t.deepEqual(scoreTitle('Headlamps', 'headlamps'), { exact: true, wordF1: 1 });
  t.deepEqual(scoreTitle('Headlamps', 'Headlamps | Outdoor Shop'), { exact: false, wordF1: 0.5 });
  t.deepEqual(scoreTitle('Headlamps', null), { exact: false, wordF1: 0 });
  t.deepEqual(scoreTitle('港口节日', '港口'), { exact: false, wordF1: (2 * 2) / (4 + 2) });
  const pages = [page('a', { title: 'Headlamps' }), page('b', { source: 'readability', title: 'Mozilla - Wikipedia' }), page('c', { title: null })];
  const scores = titleScores(pages, ['Headlamps', 'Mozilla', 'Anything']);
  t.deepEqual(scores.all, { exact: 0.5, wordF1: (1 + 2 / 3) / 2, pages: 2 });
  t.deepEqual(scores.wcxb, { exact: 1, wordF1: 1, pages: 1 });
  t.deepEqual(scores.readability, { exact: 0, wordF1: 2 / 3, pages: 1 });
});
