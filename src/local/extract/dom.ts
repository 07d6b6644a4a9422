/**
 * The slice of the DOM the extractor uses, typed structurally. linkedom's own typings lean on the DOM
 * lib, which this Node project does not load, so its documents would otherwise be `any`.
 */
import { parseHTML } from 'linkedom';

export interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly textContent: string | null;
  readonly parentNode: DomNode | null;
  /** The first child and the next sibling: a walk by them makes no array of children per element (linkedom builds one per childNodes read). */
  readonly firstChild: DomNode | null;
  readonly nextSibling: DomNode | null;
  readonly previousSibling: DomNode | null;
  readonly childNodes: ArrayLike<DomNode> & Iterable<DomNode>;
  remove(): void;
  appendChild(node: DomNode): DomNode;
  insertBefore(node: DomNode, child: DomNode | null): DomNode;
}

export interface DomElement extends DomNode {
  readonly ownerDocument: DomDocument;
  readonly tagName: string;
  readonly localName: string;
  readonly id: string;
  readonly className: string;
  textContent: string | null;
  readonly parentElement: DomElement | null;
  readonly children: ArrayLike<DomElement> & Iterable<DomElement>;
  readonly firstElementChild: DomElement | null;
  readonly nextElementSibling: DomElement | null;
  innerHTML: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  setAttribute(name: string, value: string): void;
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement> & Iterable<DomElement>;
  closest(selectors: string): DomElement | null;
  matches(selectors: string): boolean;
  contains(other: DomNode | null): boolean;
  replaceWith(...nodes: DomNode[]): void;
  readonly attributes: Iterable<{ readonly name: string; readonly value: string }>;
}

export interface DomDocument {
  readonly documentElement: DomElement;
  readonly head: DomElement | null;
  readonly body: DomElement | null;
  readonly title: string;
  querySelector(selectors: string): DomElement | null;
  querySelectorAll(selectors: string): ArrayLike<DomElement> & Iterable<DomElement>;
  createElement(tagName: string): DomElement;
  createTextNode(text: string): DomNode;
  /**
   * A deep copy, for a second extraction path once the first (Readability) has taken the page apart:
   * a third of what parsing the page again costs.
   */
  cloneNode(deep: true): DomDocument;
}

export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;
/** CDATA sections hold text too (an element's textContent counts them); parsed HTML seldom has any. */
export const CDATA_SECTION_NODE = 4;
export const COMMENT_NODE = 8;

/**
 * `<![CDATA[` in HTML content is a bogus comment that browsers end at the next `>`; linkedom's
 * parser reads it up to `]]>` instead, which can swallow a whole page. Scripts and styles are raw
 * text, where it means nothing, and are left alone.
 */
const CDATA_IN_CONTENT = /<(script|style)\b[\s\S]*?<\/\1\s*>|<!\[CDATA\[[^>]*>/gi;

/** A title left open before more than this much of the page swallowed it; a short rest is a truncated page's last words. */
const MAX_TITLE_LENGTH = 1000;

export function parseDocument(html: string): DomDocument {
  const asBrowsersRead = html.includes('<![CDATA[') ? html.replace(CDATA_IN_CONTENT, (match, rawTextTag) => (rawTextTag ? match : '')) : html;
  const document = parseHTML(withLostTitleEnded(asBrowsersRead)).document as unknown as DomDocument;
  placeInHeadAndBody(document);
  if (mayHoldElement(html, 'table')) rowStrayTableCells(document);
  capNestingDepth(document.documentElement);
  return document;
}

/**
 * Whether the markup may hold an element of the tag: a start tag's name is followed by a space, a
 * slash or the tag's end. A pass that only concerns one element is skipped on the pages without
 * any (two in three have no table) rather than walking every node. Once the page is parsed, its
 * elements say it for less (PageElements): a search of a page's markup costs about what a walk of
 * its nodes does.
 */
export function mayHoldElement(html: string, tag: string): boolean {
  let pattern = START_TAGS.get(tag);
  if (!pattern) START_TAGS.set(tag, (pattern = new RegExp(`<${tag}[\\s/>]`, 'i')));
  return pattern.test(html);
}

const START_TAGS = new Map<string, RegExp>();

const TABLE_ROW_HOLDERS = new Set(['TABLE', 'TBODY', 'THEAD', 'TFOOT']);
const TABLE_CELLS = new Set(['TD', 'TH']);

/**
 * A cell written straight inside a table or its body, without a `<tr>` (old hand-written pages),
 * sits in a row a browser's parser implies; htmlparser2 keeps it where it was written, and the
 * text converter, which reads a table's rows, then lost its text: a whole page, where a layout
 * table held it. Consecutive cells share one implied row, as in a browser.
 */
function rowStrayTableCells(document: DomDocument): void {
  for (const table of document.querySelectorAll('table')) {
    for (const holder of [table, ...table.children]) {
      if (!TABLE_ROW_HOLDERS.has(holder.nodeName)) continue;
      let row: DomElement | null = null;
      for (let child = holder.firstChild; child; ) {
        const next = child.nextSibling;
        if (child.nodeType === ELEMENT_NODE) {
          if (TABLE_CELLS.has(child.nodeName)) {
            if (!row) row = holder.insertBefore(document.createElement('tr'), child) as DomElement;
            row.appendChild(child);
          } else {
            row = null;
          }
        }
        child = next;
      }
    }
  }
}

/**
 * The page with a `</title>` where a lost one should have been: at the first `<` after `<title>`. A
 * title is raw text up to `</title>`, so without one the parser reads the rest of the page into it
 * (a page saved truncated or with bytes dropped) and a browser shows an empty body; lxml, and so
 * trafilatura, read the markup on. Read from the string, before the one parse.
 */
function withLostTitleEnded(html: string): string {
  const start = /<title\b[^>]*>/i.exec(html);
  if (!start) return html;
  const titleStart = start.index + start[0].length;
  if (html.length - titleStart <= MAX_TITLE_LENGTH) return html;
  TITLE_END_TAG.lastIndex = titleStart;
  if (TITLE_END_TAG.test(html)) return html;
  const end = html.indexOf('<', titleStart);
  return end === -1 ? html : `${html.slice(0, end)}</title>${html.slice(end)}`;
}

const TITLE_END_TAG = /<\/title/gi;

/** Elements that stay in the head when they come before the body's content; any other element starts the body. */
const HEAD_CONTENT = new Set(['base', 'basefont', 'bgsound', 'link', 'meta', 'noframes', 'noscript', 'script', 'style', 'template', 'title']);
/**
 * Head elements that are never shown. Met after the body's content, a browser leaves them where they
 * are, and a <title> there would become a line of text; in the head they are what they were meant to be.
 */
const HIDDEN_HEAD_CONTENT = new Set(['base', 'link', 'meta', 'style', 'title']);

/**
 * <html> holding a <head> and a <body>, or only a <body> (linkedom's getters then put the head
 * before it), with nothing beside it in the document: linkedom leaves what follows </html> there
 * (a page that two server-side includes made of two documents), where a browser reads it into the body.
 */
function hasHeadAndBodyOutline(document: DomDocument): boolean {
  const root = document.documentElement;
  if (root?.localName !== 'html') return false;
  let child = root.firstElementChild;
  if (child?.localName === 'head') child = child.nextElementSibling;
  if (child?.localName !== 'body' || child.nextElementSibling !== null) return false;
  // By childNodes: linkedom's doctype node has no nextSibling.
  for (const node of (document as unknown as DomNode).childNodes) {
    if (node !== root && (node.nodeType === ELEMENT_NODE || (node.nodeType === TEXT_NODE && normalizeSpace(node.textContent) !== ''))) return false;
  }
  return true;
}

/**
 * Gives the document one <html> holding one <head> and one <body>, as a browser's parser does and
 * linkedom's does not. Pages saved from a live DOM put a stylesheet before <head>, a script between
 * </head> and <body>, a second <body>, or a dialog after </body>. Given such a tree linkedom's
 * document.body is a new empty element, and the extractor read 112 of extraction-dev's 1,343 pages
 * as if they had no body.
 */
function placeInHeadAndBody(document: DomDocument): void {
  if (hasHeadAndBodyOutline(document)) return;
  const html = document.createElement('html');
  const head = document.createElement('head');
  const body = document.createElement('body');
  const copyAttributes = (from: DomElement, to: DomElement) => {
    for (const { name, value } of from.attributes) if (!to.hasAttribute(name)) to.setAttribute(name, value);
  };
  let inBody = false;
  /** Puts the node in the head or the body; an <html> or <head> is opened instead, and its children are returned to be placed next. */
  const placeOrOpen = (node: DomNode): DomNode[] => {
    if (node.nodeType === TEXT_NODE) {
      if (normalizeSpace(node.textContent) !== '') {
        inBody = true;
        body.appendChild(node);
      }
      return [];
    }
    if (node.nodeType !== ELEMENT_NODE) return [];
    const element = node as DomElement;
    if (element.localName === 'html' || element.localName === 'head') {
      if (element.localName === 'html') copyAttributes(element, html);
      return [...element.childNodes];
    }
    if (element.localName === 'body') {
      inBody = true;
      copyAttributes(element, body);
      for (const child of [...element.childNodes]) body.appendChild(child);
    } else if (HIDDEN_HEAD_CONTENT.has(element.localName) || (!inBody && HEAD_CONTENT.has(element.localName))) {
      head.appendChild(element);
    } else {
      inBody = true;
      body.appendChild(element);
    }
    return [];
  };
  const top = document as unknown as DomNode;
  // In document order, without recursion: a page can nest thousands of <html> start tags.
  const pending: DomNode[] = [...top.childNodes].reverse();
  for (let node = pending.pop(); node; node = pending.pop()) {
    const children = placeOrOpen(node);
    for (let index = children.length - 1; index >= 0; index -= 1) pending.push(children[index]!);
  }
  for (const node of [...top.childNodes]) if (node.nodeType === ELEMENT_NODE) node.remove();
  html.appendChild(head);
  html.appendChild(body);
  top.appendChild(html);
}

/**
 * How deep elements nest before the rest of a branch is read as text. The extractor's walks (ours,
 * Readability's, turndown's) recurse once or more per level, and a page of 20,000 nested elements
 * overflowed the stack. Chromium's parser stops nesting at 512, but Readability's conditional
 * cleaning costs the cube of the depth (7 s for one page 512 deep). The 1,343 pages of
 * extraction-dev nest 97 deep at most (p99 36), so real pages keep their structure.
 */
export const MAX_ELEMENT_DEPTH = 128;

/**
 * Gives each element at MAX_ELEMENT_DEPTH its text in place of its children. Laying the deeper
 * elements out flat instead, as Chromium does, made one element of tens of thousands of children,
 * and Readability's walks over `children` are quadratic in that (105 s for one page). Iterative,
 * since the pages it is for are those a recursion cannot walk.
 */
export function capNestingDepth(root: DomNode): void {
  walkBranch(root, (node, depth) => {
    if (depth < MAX_ELEMENT_DEPTH || node.nodeType !== ELEMENT_NODE || !node.firstChild) return true;
    (node as DomElement).textContent = textOfBranch(node);
    return false;
  });
}

/**
 * Visits a branch's nodes in document order without a recursion (depth 1 is root's children):
 * `enter` says whether to go into a node's children, `leave` runs once they are done.
 */
export function walkBranch(root: DomNode, enter: (node: DomNode, depth: number) => boolean, leave?: (node: DomNode) => void): void {
  // Each child and sibling is read once: linkedom finds them by stepping along its node list.
  let node = root.firstChild;
  let depth = 1;
  while (node) {
    const child = enter(node, depth) ? node.firstChild : null;
    if (child) {
      node = child;
      depth++;
      continue;
    }
    let next = node.nextSibling;
    while (!next) {
      node = node.parentNode!;
      depth--;
      if (node === root) return;
      leave?.(node);
      next = node.nextSibling;
    }
    node = next;
  }
}

/** Elements that run within a line: the text on either side of them is one line. */
export const INLINE_ELEMENTS: ReadonlySet<string> = new Set(
  'A ABBR B BDI BDO BR CITE CODE DATA DFN EM FONT I IMG KBD MARK Q S SAMP SMALL SPAN STRONG SUB SUP TIME U VAR WBR'.split(' '),
);
const UNREAD_ELEMENTS = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT']);

/** The text of a branch, a line break where a block element starts or ends, without a recursion. */
function textOfBranch(root: DomNode): string {
  const parts: string[] = [];
  const breakLine = (node: DomNode) => {
    if (node.nodeType === ELEMENT_NODE && !INLINE_ELEMENTS.has(node.nodeName) && parts.at(-1) !== '\n') parts.push('\n');
  };
  walkBranch(
    root,
    (node) => {
      if (node.nodeType === TEXT_NODE) parts.push(node.textContent ?? '');
      else breakLine(node);
      return node.nodeType === ELEMENT_NODE && !UNREAD_ELEMENTS.has(node.nodeName);
    },
    breakLine,
  );
  return parts.join('');
}

/**
 * One character of the scripts that write no spaces between words (Chinese, Japanese, Korean), as a
 * regular expression source: measures of text length and word counts treat these apart.
 */
export const CJK_CHARACTER = '[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}]';
/** Tests for one such character. */
export const CJK = new RegExp(CJK_CHARACTER, 'u');

/** Collapses runs of whitespace (including non-breaking spaces) to one space and trims. */
export function normalizeSpace(text: string | null | undefined): string {
  return (text ?? '').replace(/[\s\u00a0]+/g, ' ').trim();
}

const WHITE_SPACE = /\s/;

/** Whether the character at `index` is white space as `\s` reads it; ASCII is told apart without the pattern. */
function isWhiteSpaceAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code === 32 || (code >= 9 && code <= 13) || (code >= 127 && WHITE_SPACE.test(text[index]!));
}

/**
 * `normalizeSpace(text).length` without building the string: callers that weigh a text by its
 * length asked for a copy of every paragraph and page they measured.
 */
export function normalizedLength(text: string | null | undefined): number {
  const value = text ?? '';
  let length = 0;
  let spaceBefore = false;
  for (let index = 0; index < value.length; index += 1) {
    if (isWhiteSpaceAt(value, index)) {
      // A run of white space counts once, and only between characters: trimmed at either end.
      spaceBefore = length > 0;
    } else {
      if (spaceBefore) length += 1;
      spaceBefore = false;
      length += 1;
    }
  }
  return length;
}

/**
 * The text of a string written for machines that may hold HTML anyway: JSON-LD strings are not HTML,
 * yet publishers often leave entities (&#8217;, &reg;) and even tags in them (a product description's
 * <p> and <br>). A tag parts words, as on a page; entities are read as HTML reads them.
 */
export function textOfMarkupString(document: DomDocument, text: string): string {
  if (!/[&<]/.test(text)) return text;
  const holder = document.createElement('div');
  holder.innerHTML = text.replace(/<[^>]*>/g, ' ');
  return normalizeSpace(holder.textContent);
}

/** Inline elements that hold text of their own (not <br>, <img>, <wbr>), and labels. */
const TEXT_INLINE_ELEMENTS = new Set([...INLINE_ELEMENTS, 'LABEL'].filter((name) => !['BR', 'IMG', 'WBR'].includes(name)));
/** Subtrees whose spacing is the author's to the character. */
const SPACING_KEPT = new Set(['PRE', 'CODE', 'KBD', 'SAMP', 'TEXTAREA', ...UNREAD_ELEMENTS]);
const WORD_CHARACTER = /[\p{L}\p{N}]/u;
const LOWER_CASE_LETTER = /\p{Ll}/u;

/**
 * Puts a space between two inline elements that stand side by side with no text between them when
 * their texts would otherwise run together into one word: a shop's brand and product name
 * (`<span>Acme</span><span>Trail Lamp</span>`), a film's year, running time and rating. Pages lay
 * such spans out apart with CSS (flex rows, blocks); read as text they glued into one token
 * ("AcmeTrail"). A lower-case letter followed by another is left alone, as is text in CJK scripts:
 * there the two spans are parts of one word (a kerned or highlighted syllable).
 */
export function spaceAdjacentInlineWords(document: DomDocument): void {
  const body = document.body;
  if (!body) return;
  walkBranch(body, (node) => {
    if (node.nodeType !== ELEMENT_NODE) return false;
    if (SPACING_KEPT.has(node.nodeName)) return false;
    const before = node.previousSibling;
    if (before?.nodeType === ELEMENT_NODE && TEXT_INLINE_ELEMENTS.has(node.nodeName) && TEXT_INLINE_ELEMENTS.has(before.nodeName)) {
      const last = (before.textContent ?? '').slice(-1);
      const first = (node.textContent ?? '').charAt(0);
      const oneWord = LOWER_CASE_LETTER.test(last) && LOWER_CASE_LETTER.test(first);
      if (WORD_CHARACTER.test(last) && WORD_CHARACTER.test(first) && !oneWord && !CJK.test(last) && !CJK.test(first)) {
        node.parentNode!.insertBefore(document.createTextNode(' '), node);
      }
    }
    return true;
  });
}

/** Whether an ancestor of `element` passes `test`, looking up to `stopAt` (not included) or the top. */
export function hasAncestor(element: DomElement, test: (ancestor: DomElement) => boolean, stopAt: DomElement | null = null): boolean {
  for (let ancestor = element.parentElement; ancestor && ancestor !== stopAt; ancestor = ancestor.parentElement) if (test(ancestor)) return true;
  return false;
}

/** The element itself or its nearest ancestor that holds `target`; null when none does. */
export function nearestHolder(element: DomElement, target: DomNode): DomElement | null {
  for (let holder: DomElement | null = element; holder; holder = holder.parentElement) if (holder.contains(target)) return holder;
  return null;
}

/**
 * Removes the elements under `root` that match `selectors` and whose whole text, at most `maxLength`
 * characters, matches `pattern`: a label that is all an element says ("Learn more", "Reply",
 * "Posts: 4,032"), unless `keep` keeps it (given the element and its whole text, space-normalised).
 */
export function removeElementsByWholeText(root: DomElement, selectors: string, pattern: RegExp, maxLength: number, keep?: (element: DomElement, text: string) => boolean): void {
  for (const element of shortElements(root, selectors, maxLength)) {
    if (!element.parentNode) continue;
    const text = normalizeSpace(element.textContent);
    if (text.length <= maxLength && pattern.test(text) && !keep?.(element, text)) element.remove();
  }
}

/** An element being walked by shortElements, and the characters counted under it so far. */
interface OpenElement {
  element: DomElement;
  count: number;
  isCandidate: boolean;
}

/**
 * The elements under `root` that match `selectors` (as querySelectorAll finds them, in document
 * order) and whose text has at most `limit` characters that are not white space. One walk counts
 * every element's text from the bottom up, each count stopping past the limit: the candidates nest
 * (every <div> up to the page's wrapper), and counting from each of them down read the same nodes
 * again and again. A caller that removes some of them in document order changes no later one's
 * text: a later element lies inside a removed one or after it, never around it.
 */
export function shortElements(root: DomElement, selectors: string, limit: number): DomElement[] {
  const cap = limit + 1;
  const candidates: DomElement[] = [];
  const short = new Set<DomElement>();
  const open: OpenElement[] = [{ element: root, count: 0, isCandidate: false }];
  // querySelectorAll leaves a <template>'s content out; its text still counts for the template.
  let templateDepth = 0;
  walkBranch(
    root,
    (node) => {
      const parent = open[open.length - 1]!;
      if (node.nodeType === TEXT_NODE || node.nodeType === CDATA_SECTION_NODE) {
        if (parent.count < cap) parent.count += countNonSpace(node.textContent ?? '', cap - parent.count);
        return false;
      }
      if (node.nodeType !== ELEMENT_NODE) return false;
      const element = node as DomElement;
      const isCandidate = templateDepth === 0 && element.matches(selectors);
      if (isCandidate) candidates.push(element);
      if (!element.firstChild) {
        if (isCandidate) short.add(element);
        return false;
      }
      if (element.localName === 'template') templateDepth += 1;
      open.push({ element, count: 0, isCandidate });
      return true;
    },
    () => {
      const closed = open.pop()!;
      if (closed.element.localName === 'template') templateDepth -= 1;
      if (closed.isCandidate && closed.count <= limit) short.add(closed.element);
      const parent = open[open.length - 1]!;
      parent.count = Math.min(cap, parent.count + closed.count);
    },
  );
  return candidates.filter((element) => short.has(element));
}

/** The characters (UTF-16 units, as a string's length counts) of `text` that are not white space, counted up to `cap`. */
function countNonSpace(text: string, cap: number): number {
  let count = 0;
  for (let index = 0; index < text.length && count < cap; index += 1) {
    if (!isWhiteSpaceAt(text, index)) count += 1;
  }
  return count;
}

/**
 * A line of a highlighted code block: Shiki's `span.line`, Expressive Code's `.ec-line`,
 * prism-react-renderer's `.token-line`, and the like.
 */
const CODE_LINE_CLASS = /(?:^|[\s-])line(?:\s|$)/;
/** Elements that a browser lays out as lines of their own, inside <pre> as anywhere. */
const BLOCK_IN_CODE = new Set(['DIV', 'P', 'LI', 'TR', 'TABLE', 'UL', 'OL', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6']);

const isCodeLine = (element: DomElement) => BLOCK_IN_CODE.has(element.tagName) || CODE_LINE_CLASS.test(element.getAttribute('class') ?? '');

/**
 * Code highlighters that wrap each line in an element of their own often leave out the newline
 * between lines and let CSS (`display: block`) draw it. As text, such a block's lines run together
 * ("npm install xcd project"), or (div lines) come out a blank line apart; as markdown, a fenced
 * block is the code's textContent, all on one line. Such a block is rewritten as its plain text, one
 * line per line element; blocks of plain text with newlines are left as they are. Says whether it
 * rewrote any.
 */
export function separateCodeLines(document: DomDocument): boolean {
  let rewritten = false;
  for (const pre of document.querySelectorAll('pre')) {
    // The code element when there is one: what sits beside it in the <pre> (a copy button, a
    // caption) is left for the boilerplate rules to judge.
    const holder = pre.querySelector('code') ?? pre;
    if (!holder.firstElementChild || ![...holder.querySelectorAll('*')].some(isCodeLine)) continue;
    const parts: string[] = [];
    appendCodeText(holder, parts);
    while (holder.firstChild) holder.firstChild.remove();
    holder.appendChild(document.createTextNode(parts.join('').replace(/\n$/, '')));
    rewritten = true;
  }
  return rewritten;
}

function appendCodeText(node: DomNode, parts: string[]): void {
  const atLineStart = () => parts.length === 0 || parts[parts.length - 1]!.endsWith('\n');
  for (let child = node.firstChild; child !== null; child = child.nextSibling) {
    if (child.nodeType === TEXT_NODE) {
      parts.push(child.textContent ?? '');
      continue;
    }
    if (child.nodeType !== ELEMENT_NODE) continue;
    const element = child as DomElement;
    if (element.tagName === 'BR') {
      parts.push('\n');
      continue;
    }
    if (element.tagName === 'BUTTON') continue;
    const line = isCodeLine(element);
    if (line && !atLineStart()) parts.push('\n');
    appendCodeText(element, parts);
    if (line && !atLineStart()) parts.push('\n');
  }
}
