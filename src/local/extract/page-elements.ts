/**
 * A page's elements in document order, read in one walk, for the readings made before extraction
 * changes the page: whether it has code blocks, `<noscript>` content or JSON-LD, its type and its
 * metadata. Each of those asked the whole page with a selector of its own, and linkedom answers
 * every such query by stepping through all of the page's nodes (elements, attributes, texts and end
 * markers), some fifteen walks a page. Here a tag name is a lookup, and any other selector is tested
 * on the elements alone.
 *
 * The answers are querySelectorAll's: document order, a <template>'s content left out as linkedom
 * leaves it out, the same selector matching. They hold only while the page is not changed.
 */
import { ELEMENT_NODE, walkBranch, type DomDocument, type DomElement, type DomNode } from './dom.js';

const NONE: readonly DomElement[] = [];

export class PageElements {
  private readonly elements: DomElement[] = [];
  /** By lower-case tag name: HTML's tag selectors match regardless of case, an SVG's camel-cased names included. */
  private readonly byTag = new Map<string, DomElement[]>();

  constructor(document: DomDocument) {
    /** Keeps an element, and says whether to read its children: not a template's. */
    const enter = (node: DomNode): boolean => {
      if (node.nodeType !== ELEMENT_NODE) return false;
      this.add(node as DomElement);
      return !isTemplate(node);
    };
    // The document's children by childNodes: linkedom's doctype node has no nextSibling to walk on.
    for (const node of (document as unknown as DomNode).childNodes) if (enter(node)) walkBranch(node, enter);
  }

  /** `document.querySelectorAll(tag)` for one bare tag name, given in lower case. */
  named(tag: string): readonly DomElement[] {
    return this.byTag.get(tag) ?? NONE;
  }

  /** `document.querySelectorAll(selectors)`. */
  matching(selectors: string): DomElement[] {
    return this.elements.filter((element) => element.matches(selectors));
  }

  /** `document.querySelectorAll(selectors)` where every match is a `tag` element: `time[datetime]`. */
  namedMatching(tag: string, selectors: string): DomElement[] {
    return this.named(tag).filter((element) => element.matches(selectors));
  }

  private add(element: DomElement): void {
    this.elements.push(element);
    const tag = element.localName.toLowerCase();
    const tagged = this.byTag.get(tag);
    if (tagged) tagged.push(element);
    else this.byTag.set(tag, [element]);
  }
}

/** Those of the elements that `root.querySelectorAll` would find too: its descendants. */
export function within(root: DomElement, elements: readonly DomElement[]): DomElement[] {
  return elements.filter((element) => element !== root && root.contains(element));
}

/** As linkedom's querySelectorAll tells one: by its exact local name. */
function isTemplate(node: DomNode): boolean {
  return (node as DomElement).localName === 'template';
}
