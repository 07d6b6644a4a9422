/**
 * Word analysis on the JavaScript side, used to find query terms inside a page's text for its
 * snippet. Retrieval itself tokenizes natively (LanceDB's "simple" tokenizer, lower case, ASCII
 * folding, English stop words and Snowball stemming); this mirrors it closely enough that a word the
 * index matched is recognised in the text, without a round trip to the native tokenizer per page.
 */
import { stemmer } from 'stemmer';

/** A word is a run of letters and digits, as the native "simple" tokenizer splits. */
const WORD_PATTERN = /[\p{L}\p{N}]+/gu;

/**
 * Words too common to pick a passage by. A subset of the index's own English stop words, so a query
 * the index can answer always has a stem here.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by for from has have he her his i if in into is it its me my no not of on or ' +
    'our she so such than that the their them then there these they this those to was we were what when ' +
    'which who will with you your'
  ).split(' '),
);

const NON_ASCII = /[^\x00-\x7f]/;
const COMBINING_MARKS = /\p{M}/gu;

/** Lower case with diacritics removed ("Café" → "cafe"), as the index's ASCII folding does. */
export function foldWord(word: string): string {
  const lower = word.toLowerCase();
  return NON_ASCII.test(lower) ? lower.normalize('NFD').replace(COMBINING_MARKS, '') : lower;
}

/**
 * Stems of words seen lately. A language's running text reuses a small vocabulary, and stemming is
 * the cost of scoring a search's candidates (the hybrid scorer's lexical feature reads about 80
 * openings per query, and a rerank's in-request BM25 every word of its documents); cleared when
 * full, which keeps it bounded without an LRU's bookkeeping. Full is counted in characters as well
 * as in words: a request's documents are the client's to choose, and 100,000 words of a few
 * kilobytes each would otherwise stay in every thread that stems (each reranker worker has its own).
 * A word longer than any real one is stemmed without being kept.
 */
const recentStems = new Map<string, string>();
const RECENT_STEMS_LIMIT = 100_000;
const RECENT_STEMS_CHARACTERS_LIMIT = 2_000_000;
const CACHED_WORD_LENGTH_LIMIT = 48;
let recentStemCharacters = 0;

/** The stem a word is matched by. */
export function stemWord(word: string): string {
  let stem = recentStems.get(word);
  if (stem === undefined) {
    stem = stemmer(foldWord(word));
    if (word.length > CACHED_WORD_LENGTH_LIMIT) return stem;
    if (recentStems.size >= RECENT_STEMS_LIMIT || recentStemCharacters >= RECENT_STEMS_CHARACTERS_LIMIT) {
      recentStems.clear();
      recentStemCharacters = 0;
    }
    recentStems.set(word, stem);
    recentStemCharacters += word.length + stem.length;
  }
  return stem;
}

/** Words and characters the stem cache holds, for the tests of its bound. */
export const recentStemsHeld = () => ({ words: recentStems.size, characters: recentStemCharacters });

/**
 * The distinct stems of a query's words, stop words left out, in query order. Empty when the query
 * has no word worth looking for (all punctuation or stop words).
 */
export function queryStems(query: string): string[] {
  const stems = new Set<string>();
  for (const [word] of query.matchAll(WORD_PATTERN)) {
    const folded = foldWord(word);
    if (!STOP_WORDS.has(folded)) stems.add(stemmer(folded));
  }
  return [...stems];
}

/** A query word found in a text: UTF-16 offsets, and which of the query's stems it matched. */
export interface TermOccurrence {
  start: number;
  end: number;
  term: number;
}

/**
 * Finds a query's words in a page. Tokenizing and stemming every word of a 50 KB page would
 * dominate snippet time, so candidates are found by one regular expression over the words' first
 * letters, and only those are stemmed: stemming rewrites the end of a word, never its first few
 * letters (a stem shorter than that, like "ti" from "ties", is its own prefix). A word whose first
 * letters carry diacritics ("élan") is missed: the snippet then falls back to another passage.
 */
export class StemMatcher {
  private static readonly PREFIX_LENGTH = 3;
  private readonly stemIndex: ReadonlyMap<string, number>;
  private readonly candidates: RegExp | null;

  constructor(stems: readonly string[]) {
    this.stemIndex = new Map(stems.map((stem, index) => [stem, index]));
    const prefixes = [...new Set(stems.map((stem) => stem.slice(0, StemMatcher.PREFIX_LENGTH)))];
    this.candidates =
      prefixes.length === 0
        ? null
        : new RegExp(`(?<![\\p{L}\\p{N}])(?:${prefixes.map(escapeRegExp).join('|')})[\\p{L}\\p{N}]*`, 'giu');
  }

  get termCount(): number {
    return this.stemIndex.size;
  }

  /** The index of the query stem this word matches, or -1. */
  match(word: string): number {
    return this.stemIndex.get(stemWord(word)) ?? -1;
  }

  /** Every word of `text` that matches a query stem, in order. */
  *occurrences(text: string): Generator<TermOccurrence> {
    if (!this.candidates) return;
    for (const candidate of text.matchAll(this.candidates)) {
      const term = this.match(candidate[0]);
      if (term >= 0) yield { start: candidate.index, end: candidate.index + candidate[0].length, term };
    }
  }
}

function escapeRegExp(literal: string): string {
  return literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
