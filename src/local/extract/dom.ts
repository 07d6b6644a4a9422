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
  readonly childNodes: ArrayLike<DomNode> & Iterable<DomNode>;
  remove(): void;
}

export interface DomElement extends DomNode {
  readonly tagName: string;
  readonly localName: string;
  readonly id: string;
  readonly className: string;
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
  contains(other: DomNode | null): boolean;
  replaceWith(...nodes: DomNode[]): void;
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
}

export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;

/**
 * `<![CDATA[` in HTML content is a bogus comment that browsers end at the next `>`; linkedom's
 * parser reads it up to `]]>` instead, which can swallow a whole page. Scripts and styles are raw
 * text, where it means nothing, and are left alone.
 */
const CDATA_IN_CONTENT = /<(script|style)\b[\s\S]*?<\/\1\s*>|<!\[CDATA\[[^>]*>/gi;

export function parseDocument(html: string): DomDocument {
  const asBrowsersRead = html.includes('<![CDATA[') ? html.replace(CDATA_IN_CONTENT, (match, rawTextTag) => (rawTextTag ? match : '')) : html;
  return parseHTML(asBrowsersRead).document as unknown as DomDocument;
}

/**
 * One character of the scripts that write no spaces between words (Chinese, Japanese, Korean), as a
 * regular expression source: measures of text length and word counts treat these apart.
 */
export const CJK_CHARACTER = '[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}]';

/** Collapses runs of whitespace (including non-breaking spaces) to one space and trims. */
export function normalizeSpace(text: string | null | undefined): string {
  return (text ?? '').replace(/[\s\u00a0]+/g, ' ').trim();
}
