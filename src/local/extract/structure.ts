/**
 * Measures of a page's structure that page-type detection and content selection share: how much
 * text each element holds (and how much of it is link text), and groups of repeated sibling blocks,
 * the shape of a thread's posts and of a listing's items.
 */
import { ELEMENT_NODE, TEXT_NODE, walkBranch, type DomElement } from './dom.js';

/** Never visible text. */
const INVISIBLE_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'IFRAME', 'OBJECT']);

export interface TextMeasure {
  /** Visible characters, whitespace runs counted once. */
  text: number;
  /** Of which inside links. */
  linkText: number;
}

/**
 * Text and link text under each element, in one bottom-up pass. Characters rather than words, so
 * that Chinese or Japanese text, which has no spaces, weighs what it reads like.
 */
export function measureText(root: DomElement): Map<DomElement, TextMeasure> {
  const measures = new Map<DomElement, TextMeasure>();
  const visit = (element: DomElement, insideLink: boolean): TextMeasure => {
    const measure: TextMeasure = { text: 0, linkText: 0 };
    for (let child = element.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === TEXT_NODE) {
        const length = visibleLength(child.textContent ?? '');
        measure.text += length;
        if (insideLink) measure.linkText += length;
      } else if (child.nodeType === ELEMENT_NODE && !INVISIBLE_TAGS.has(child.nodeName)) {
        const inner = visit(child as DomElement, insideLink || child.nodeName === 'A');
        measure.text += inner.text;
        measure.linkText += inner.linkText;
      }
    }
    measures.set(element, measure);
    return measure;
  };
  visit(root, false);
  return measures;
}

/** Length with whitespace runs counted as one character, without normalising the string. */
function visibleLength(text: string): number {
  let length = 0;
  let inSpace = true;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    const isSpace = code === 32 || code === 10 || code === 9 || code === 13 || code === 160 || code === 12;
    if (isSpace) {
      if (!inSpace) length += 1;
      inSpace = true;
    } else {
      length += 1;
      inSpace = false;
    }
  }
  return length;
}

export interface SiblingGroup {
  parent: DomElement;
  members: DomElement[];
  /** Visible characters in all members. */
  text: number;
}

/** Class tokens with digits ("post-1234", "item_7") name one instance, not the kind of block. */
const INSTANCE_TOKEN = /\d/;

/**
 * Tag and first class: siblings with the same signature are instances of one kind of block. Later
 * classes often mark a state ("is-first", "unread", "odd") that differs between instances.
 */
export function blockSignature(element: DomElement): string {
  // The attribute, not className: an <svg>'s className is an object, not a string.
  const firstClass = (element.getAttribute('class') ?? '').split(/\s+/).find((token) => token && !INSTANCE_TOKEN.test(token)) ?? '';
  return `${element.nodeName}.${firstClass}`;
}

/**
 * Groups of at least minMembers sibling elements of the same signature that hold text, biggest
 * first. Inline tags never form one: a run of <a> or <span> is a line, not a list of blocks.
 */
export function repeatedSiblingGroups(root: DomElement, measures: Map<DomElement, TextMeasure>, minMembers: number): SiblingGroup[] {
  const groups: SiblingGroup[] = [];
  const groupChildren = (parent: DomElement) => {
    let childCount = 0;
    for (let child = parent.firstElementChild; child && childCount < minMembers; child = child.nextElementSibling) childCount += 1;
    if (childCount < minMembers) return;
    const bySignature = new Map<string, DomElement[]>();
    for (let child = parent.firstElementChild; child; child = child.nextElementSibling) {
      if (INLINE_TAGS.has(child.nodeName) || INVISIBLE_TAGS.has(child.nodeName)) continue;
      if ((measures.get(child)?.text ?? 0) === 0) continue;
      const signature = blockSignature(child);
      const members = bySignature.get(signature);
      if (members) members.push(child);
      else bySignature.set(signature, [child]);
    }
    for (const members of bySignature.values()) {
      if (members.length < minMembers) continue;
      const text = members.reduce((sum, member) => sum + (measures.get(member)?.text ?? 0), 0);
      groups.push({ parent, members, text });
    }
  };
  // The root and every element under it in document order, as querySelectorAll('*') gives them (a
  // <template>'s content left out), read in one walk: asking each for its `children` built a list of
  // them every time.
  groupChildren(root);
  walkBranch(root, (node) => {
    if (node.nodeType !== ELEMENT_NODE) return false;
    const element = node as DomElement;
    groupChildren(element);
    return element.localName !== 'template';
  });
  return groups.sort((a, b) => b.text - a.text);
}

const INLINE_TAGS = new Set(['A', 'SPAN', 'B', 'I', 'EM', 'STRONG', 'SMALL', 'IMG', 'BR', 'WBR', 'ABBR', 'CODE', 'SUP', 'SUB', 'FONT', 'LABEL', 'INPUT', 'BUTTON', 'OPTION']);
