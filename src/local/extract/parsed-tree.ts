/**
 * The DOM's content as the tree htmlparser2 makes of its HTML (domhandler's shape), for html-to-text
 * to read: serialising the content only for html-to-text to parse it again cost a twentieth of a
 * page's extraction (issue 22).
 */
import { CDATA_SECTION_NODE, COMMENT_NODE, ELEMENT_NODE, TEXT_NODE, type DomElement, type DomNode } from './dom.js';

/** A node as htmlparser2 (domhandler) shapes it, as far as html-to-text reads one. */
export type ParsedNode = ParsedElement | ParsedText | ParsedComment;

interface ParsedElement {
  type: 'tag' | 'script' | 'style';
  name: string;
  attribs: Record<string, string>;
  children: ParsedNode[];
  parent: ParsedParent;
}

interface ParsedText {
  type: 'text';
  data: string;
  parent: ParsedParent;
}

interface ParsedComment {
  type: 'comment';
  data: string;
  parent: ParsedParent;
}

type ParsedParent = ParsedElement | ParsedTree;

export interface ParsedTree {
  type: 'root';
  children: ParsedNode[];
}

/**
 * The element's children as htmlparser2 parses their serialisation (`innerHTML`): tag and attribute
 * names lower-cased, the first of two same-named attributes kept, adjacent texts one node, an empty
 * text none, and a comment between two texts keeping them apart (a CDATA section is a comment in
 * HTML). Comments carry no data: html-to-text skips them. The extractor's DOM nests 128 deep at most
 * (capNestingDepth), which bounds the recursion.
 */
export function asParsedTree(element: DomElement): ParsedTree {
  const tree: ParsedTree = { type: 'root', children: [] };
  appendChildren(element, tree);
  return tree;
}

function appendChildren(source: DomNode, parent: ParsedParent): void {
  const { children } = parent;
  for (let node = source.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === TEXT_NODE) {
      const data = node.textContent ?? '';
      const last = children[children.length - 1];
      if (last?.type === 'text') last.data += data;
      else if (data) children.push({ type: 'text', data, parent });
    } else if (node.nodeType === ELEMENT_NODE) {
      const element = node as DomElement;
      const name = element.localName.toLowerCase();
      const attribs: Record<string, string> = {};
      for (const { name: attribute, value } of element.attributes) attribs[attribute.toLowerCase()] ??= value;
      const parsed: ParsedElement = { type: name === 'script' || name === 'style' ? name : 'tag', name, attribs, children: [], parent };
      appendChildren(element, parsed);
      children.push(parsed);
    } else if (node.nodeType === COMMENT_NODE || node.nodeType === CDATA_SECTION_NODE) {
      children.push({ type: 'comment', data: '', parent });
    }
  }
}
