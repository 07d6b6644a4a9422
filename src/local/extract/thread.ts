/**
 * A thread's region, cleaned of what a forum repeats beside every post: quotes of earlier posts, the
 * author's figures, rank and badges, the row of actions, the edit note and the bare counts (score,
 * likes, the post's number) of each post; and, in a Q&A thread, the comments under the question and
 * the answers. The posts themselves, with their author and date lines, stay.
 */
import { DATE_OR_TIME, markupWords } from './boilerplate.js';
import { ELEMENT_NODE, TEXT_NODE, hasAncestor, nearestHolder, normalizeSpace, normalizedLength, removeElementsByWholeText, type DomElement, type DomNode } from './dom.js';

export function cleanThread(region: DomElement): void {
  removeRepeatedQuotes(region);
  removeMemberStatistics(region);
  removeMemberRanks(region);
  removePostActions(region);
  removeEditNotes(region);
  removeBareCounts(region);
  removeCommentsUnderAnswers(region);
}

/** Longer than this, a term or a value of a definition list is text, not a label or a figure. */
const MAX_STATISTIC_LENGTH = 40;
/** A member's figure written as one line, "Posts: 4,032" or "Joined Mar 2019", outside a definition list. */
const MEMBER_FIGURE = /^(posts|total posts|post count|messages|joined|member since|registered|founded|reputation|rep|reaction score|trophy points|points|likes received|karma|credits)\s*:?\s*\S/i;

/**
 * Beside each post a forum shows its author's figures: a definition list of short labels and values
 * ("Joined", "Messages 28", "Location"), or lines such as "Posts: 4,032". Such a list goes, unless it
 * has a link (the author's name) or a <time> (the post's date line); such a line goes on its own.
 */
function removeMemberStatistics(region: DomElement): void {
  for (const list of [...region.querySelectorAll('dl')]) {
    if (!list.parentNode || list.querySelector('a[href], time') !== null) continue;
    const items = [...list.querySelectorAll('dt, dd')];
    if (items.length >= 2 && items.every((item) => normalizedLength(item.textContent) <= MAX_STATISTIC_LENGTH)) list.remove();
  }
  removeElementsByWholeText(region, 'dt, dd, li, p, div, span', MEMBER_FIGURE, MAX_STATISTIC_LENGTH, (line) => line.querySelector('a[href], time') !== null);
}

/** Whose: the words a forum's markup puts before what it says of a post's author. */
const MEMBER_WORDS = new Set(['user', 'author', 'member', 'poster']);
/** What: a member's rank, title, banner or figures ("Well-known member", "Senior Member", "Posts: 28"). */
const RANK_WORDS = new Set(['title', 'banner', 'rank', 'extras', 'stats', 'badge', 'badges', 'blurb']);
/** The same written as one word. */
const RANK_CLASS_WORDS = new Set(['usertitle', 'userrank', 'userbanner', 'userstats', 'memberstats']);
/** Longer than this, an element is more than a rank or a badge. */
const MAX_RANK_LENGTH = 60;

function isMemberRankMarkup(element: DomElement): boolean {
  const words = markupWords(element);
  if (words.some((word) => RANK_CLASS_WORDS.has(word))) return true;
  return words.some((word, index) => MEMBER_WORDS.has(word) && RANK_WORDS.has(words[index + 1] ?? ''));
}

/**
 * Beside each post a forum shows what its author is to the site: a rank ("Well-known member"), a
 * banner, a row of badges. They say nothing of the post and repeat down the thread. An element so
 * marked goes when it is short and holds neither a link (the author's name) nor a date (the post's).
 */
function removeMemberRanks(region: DomElement): void {
  for (const element of [...region.querySelectorAll('[class], [id]')]) {
    if (!element.parentNode || !isMemberRankMarkup(element)) continue;
    const text = normalizeSpace(element.textContent);
    if (text.length > MAX_RANK_LENGTH || DATE_OR_TIME.test(text) || element.querySelector('a[href], time') !== null) continue;
    element.remove();
  }
}

/** A quote's longest text run must be at least this long to be recognised in the post it quotes. */
const MIN_QUOTED_RUN = 40;

/**
 * A reply that quotes an earlier post repeats it: the quote goes, the post it came from stays. A
 * quote of something not on the page (an article, a manual) is the reply's own content and stays.
 */
function removeRepeatedQuotes(region: DomElement): void {
  const regionText = normalizeSpace(region.textContent);
  for (const quote of [...region.querySelectorAll('blockquote')]) {
    if (!quote.parentNode || quote.parentElement?.closest('blockquote')) continue;
    const longestRun = [quote, ...quote.querySelectorAll('*')]
      .flatMap((node) => [...node.childNodes].filter((child) => child.nodeType === TEXT_NODE))
      .map((child) => normalizeSpace(child.textContent))
      .reduce((longest, run) => (run.length > longest.length ? run : longest), '');
    if (longestRun.length < MIN_QUOTED_RUN) continue;
    // From the middle of the run: a quote may add an attribution before it or cut it short.
    const middle = Math.floor((longestRun.length - MIN_QUOTED_RUN) / 2);
    const sample = longestRun.slice(middle, middle + MIN_QUOTED_RUN);
    const first = regionText.indexOf(sample);
    if (first !== -1 && regionText.indexOf(sample, first + 1) !== -1) quote.remove();
  }
}

/** A post's action as its whole text: "Reply", "Quote", "Report", "Share", "3 Likes", "Upvote (12)". */
const POST_ACTION =
  /^(?:\d+\s+)?(?:reply|replies|quote|report|share|save|embed|permalink|link|fedilink|flag|edit|delete|bookmark|follow|likes?|upvote|downvote|vote|reply with quote|multi-?quote|copy link|parent|context|hide|sponsored)(?:\s*\(?\d+\)?)?$/i;
/** Longer than this, an element is more than one action's label. */
const MAX_ACTION_LENGTH = 24;

/** The buttons and links under each post (reply, quote, report, like with its count) go. */
function removePostActions(region: DomElement): void {
  removeElementsByWholeText(region, 'a, button, li, span', POST_ACTION, MAX_ACTION_LENGTH);
}

/**
 * A post's edit note as its whole text: XenForo's "Last edited: Jul 9, 2022", phpBB's "Last edited by
 * Jo on Tue Aug 27, 2019 10:03 pm, edited 1 time in total.", FluxBB's "Last edited by jo (2024-08-03
 * 11:02:20)". It dates a change to the post; it is not the post.
 */
const EDIT_NOTE = /^last edited\b/i;
/** Longer than this, an element is more than the note: a post that starts with those words. */
const MAX_EDIT_NOTE_LENGTH = 140;

/** A post's edit note goes when it carries the date of the edit. */
function removeEditNotes(region: DomElement): void {
  removeElementsByWholeText(region, 'div, p, span, em, i, small, dd, li', EDIT_NOTE, MAX_EDIT_NOTE_LENGTH, (_note, text) => !DATE_OR_TIME.test(text));
}

/**
 * A number as the whole text of an element: a post's score, its like or reply count, its number in
 * the thread ("#12", Discourse's position after the date). It counts something about the post and
 * is not the post; the truths of extraction-dev's forum pages leave such numbers out.
 */
const BARE_COUNT = /^#?[-+]?\d[\d,.]*\s?[km]?$/i;
/** Longer than this, a number is more than a count: a date, a phone number, a quantity with its unit. */
const MAX_COUNT_LENGTH = 8;

/** The sibling beside the element, past whitespace. */
function besideOf(element: DomElement, side: 'previousSibling' | 'nextSibling'): DomNode | null {
  let node = element[side];
  while (node?.nodeType === TEXT_NODE && normalizeSpace(node.textContent) === '') node = node[side];
  return node;
}

/**
 * The number is part of a sentence ("Qt <a>6.5</a> is an LTS": a word in the same run of text) or
 * the value of a label before it ("<strong>Posts:</strong> <a>722</a>").
 */
function isInRunningText(element: DomElement): boolean {
  const before = besideOf(element, 'previousSibling');
  const after = besideOf(element, 'nextSibling');
  const isWords = (node: DomNode | null) => node?.nodeType === TEXT_NODE && /\p{L}/u.test(node.textContent ?? '');
  return isWords(before) || isWords(after) || (before?.nodeType === ELEMENT_NODE && normalizeSpace(before.textContent).endsWith(':'));
}

/**
 * A thread's bare counts go. A number in a sentence ("Qt <a>6.5</a> is an LTS") or after its label
 * ("Posts: 722") stays, as do numbers in a post's own table or code (extraction-dev, issue 22: forum
 * pages 0.8271 → 0.8342 on the tune half, 27 up and none down; 0.7906 → 0.7941 on the report half,
 * 24 up and one down, whose truth keeps each post's "#N" on its date line).
 */
function removeBareCounts(region: DomElement): void {
  removeElementsByWholeText(
    region,
    'a, b, button, div, em, li, p, small, span, strong',
    BARE_COUNT,
    MAX_COUNT_LENGTH,
    (element) => element.closest('pre, code, table') !== null || isInRunningText(element),
  );
}

const itemType = (element: DomElement) => element.getAttribute('itemtype') ?? '';

/**
 * A Q&A page's region can be its answers alone, when they outweigh the question beside them (Stack
 * Exchange's layout): the thread would lose its opening post. The region is widened to hold the
 * question's own text, the schema.org Question's `text` property, not an answer's or a comment's
 * (extraction-dev, issue 22: forum pages 0.8342 → 0.8371 on the tune half, 5 up; 0.7941 → 0.8017
 * on the report half, 3 up; none down on either).
 */
export function withQuestion(region: DomElement, body: DomElement): DomElement {
  const question = body.querySelector('[itemtype*="schema.org/Question" i]');
  const questionText = question && [...question.querySelectorAll('[itemprop~="text" i]')].find((text) => text.parentElement?.closest('[itemscope]') === question);
  return (questionText && nearestHolder(region, questionText)) ?? region;
}

/** One of a Q&A thread's answers: a schema.org Answer item, or so classed. */
function isAnswer(element: DomElement): boolean {
  return /Answer/.test(itemType(element)) || markupWords(element).includes('answer');
}

/** A Q&A thread's question, one of its answers or their container. */
function isQuestionOrAnswer(element: DomElement): boolean {
  return isAnswer(element) || /Question/.test(itemType(element)) || markupWords(element).some((word) => word === 'question' || word === 'answers');
}

/**
 * Under a Q&A thread's question and each answer sits a list of short comments (asking for details,
 * pointing to a duplicate); as under an article, they are remarks on a post, not posts of the
 * thread. A list classed "comments" inside the question or an answer goes. Only where the thread has
 * answers: a forum whose replies are themselves classed comments keeps them.
 */
function removeCommentsUnderAnswers(region: DomElement): void {
  const lists = [...region.querySelectorAll('[class*="comments" i], [id*="comments" i]')].filter((element) => markupWords(element).includes('comments'));
  if (lists.length === 0 || ![...region.querySelectorAll('[itemtype], [class*="answer" i], [id*="answer" i]')].some(isAnswer)) return;
  for (const list of lists) {
    if (list.parentNode && hasAncestor(list, isQuestionOrAnswer, region)) list.remove();
  }
}
