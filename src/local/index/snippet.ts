/**
 * Query-biased snippets: the passage of a page's text where the query's words cluster most densely,
 * cut on word boundaries, with an ellipsis where the text goes on. A page whose text holds none of
 * the words (it matched by its title) gets its opening passage.
 */
import type { StemMatcher, TermOccurrence } from './terms.js';

export const DEFAULT_SNIPPET_LENGTH = 250;

const ELLIPSIS = '…';
/** How far a cut may move to reach a word boundary; past that (unspaced scripts, long tokens) it cuts mid-word. */
const MAX_BOUNDARY_SHIFT = 30;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;
const WHITESPACE_RUN = /\s+/g;

/**
 * At most `maxLength` code points (ellipses included). Offsets are UTF-16 units, which bound code
 * points from above, so the cap holds for any script.
 */
export function buildSnippet(text: string, matcher: StemMatcher, maxLength = DEFAULT_SNIPPET_LENGTH): string {
  const budget = maxLength - 2 * ELLIPSIS.length;
  if (text.length <= maxLength) return collapseWhitespace(text);
  const occurrences = [...matcher.occurrences(text)];
  const cluster = densestCluster(occurrences, matcher.termCount, budget) ?? { start: 0, end: 0 };
  let { start, end } = placeWindow(cluster, budget, text.length);
  start = forwardToWordStart(text, start, cluster.start);
  end = backToWordEnd(text, end, cluster.end);
  return (start > 0 ? ELLIPSIS : '') + collapseWhitespace(text.slice(start, end)) + (end < text.length ? ELLIPSIS : '');
}

/**
 * The run of occurrences fitting in `budget` units that covers the most distinct query terms,
 * then the most occurrences; the earliest such run wins ties (pages tend to say the point first).
 */
function densestCluster(
  occurrences: readonly TermOccurrence[],
  termCount: number,
  budget: number,
): { start: number; end: number } | null {
  if (occurrences.length === 0) return null;
  const countsInWindow = new Array<number>(termCount).fill(0);
  let distinctInWindow = 0;
  let left = 0;
  let best = { score: -1, start: 0, end: 0 };
  for (let right = 0; right < occurrences.length; right++) {
    const entering = occurrences[right]!;
    if (countsInWindow[entering.term]!++ === 0) distinctInWindow++;
    while (entering.end - occurrences[left]!.start > budget) {
      const leaving = occurrences[left++]!;
      if (--countsInWindow[leaving.term]! === 0) distinctInWindow--;
    }
    const score = distinctInWindow * occurrences.length + (right - left + 1);
    if (score > best.score) best = { score, start: occurrences[left]!.start, end: entering.end };
  }
  return { start: best.start, end: best.end };
}

/** A window of `budget` units around the cluster, with a third of the slack before it for context. */
function placeWindow(cluster: { start: number; end: number }, budget: number, textLength: number) {
  const slack = Math.max(0, budget - (cluster.end - cluster.start));
  let start = Math.max(0, cluster.start - Math.floor(slack / 3));
  const end = Math.min(textLength, start + budget);
  start = Math.max(0, end - budget);
  return { start, end };
}

function isWordCharacterAt(text: string, index: number): boolean {
  const character = text[index];
  return character !== undefined && WORD_CHARACTER.test(character);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** Moves a cut that falls inside a word to the start of the next word, never past `limit`. */
function forwardToWordStart(text: string, start: number, limit: number): number {
  if (start === 0) return 0;
  let index = start;
  if (isWordCharacterAt(text, index - 1)) {
    while (index < limit && index - start < MAX_BOUNDARY_SHIFT && isWordCharacterAt(text, index)) index++;
    if (isWordCharacterAt(text, index) && index - start >= MAX_BOUNDARY_SHIFT) index = start;
  }
  while (index < limit && index - start < MAX_BOUNDARY_SHIFT && !isWordCharacterAt(text, index)) index++;
  if (isLowSurrogate(text.charCodeAt(index))) index++;
  return index;
}

/** Moves a cut that falls inside a word back to the end of the previous word, never before `limit`. */
function backToWordEnd(text: string, end: number, limit: number): number {
  if (end >= text.length) return text.length;
  let index = end;
  if (isWordCharacterAt(text, index)) {
    while (index > limit && end - index < MAX_BOUNDARY_SHIFT && isWordCharacterAt(text, index - 1)) index--;
    if (isWordCharacterAt(text, index - 1) && end - index >= MAX_BOUNDARY_SHIFT) index = end;
  }
  if (isHighSurrogate(text.charCodeAt(index - 1))) index--;
  return index;
}

function collapseWhitespace(passage: string): string {
  return passage.replace(WHITESPACE_RUN, ' ').trim();
}
