/**
 * The main region of a page whose content is many blocks rather than one body of prose: a thread's
 * posts, a listing's items, a product's description and specification. Readability looks for the
 * single best block of paragraphs and drops the rest as comments or boilerplate; here the region
 * that holds most of the page's text, after its chrome is gone, is kept whole.
 */
import type { DomDocument, DomElement } from './dom.js';
import { measureText, type TextMeasure } from './structure.js';

/** The page's declared main region, when it holds at least this share of the text. */
const DECLARED_MAIN_SHARE = 0.5;
/** Go down into a child while it holds at least this share of its parent's weight. */
const DESCEND_SHARE = 0.8;
/** Link text weighs this much of other text: menus and link lists are rarely the content. */
const LINK_WEIGHT = 0.5;

const DECLARED_MAIN = 'main, [role="main"]';

function weight(measure: TextMeasure | undefined): number {
  return measure ? measure.text - measure.linkText * (1 - LINK_WEIGHT) : 0;
}

export function selectMainRegion(document: DomDocument): DomElement | null {
  const body = document.body;
  if (!body) return null;
  const measures = measureText(body);
  const pageWeight = weight(measures.get(body));
  if (pageWeight <= 0) return null;

  let region = body;
  const declared = [...body.querySelectorAll(DECLARED_MAIN)]
    .filter((element) => weight(measures.get(element)) >= pageWeight * DECLARED_MAIN_SHARE)
    .pop();
  if (declared) region = declared;

  for (;;) {
    let heaviest: DomElement | null = null;
    let heaviestWeight = 0;
    for (const child of region.children) {
      const childWeight = weight(measures.get(child));
      if (childWeight > heaviestWeight) {
        heaviest = child;
        heaviestWeight = childWeight;
      }
    }
    if (!heaviest || heaviestWeight < weight(measures.get(region)) * DESCEND_SHARE) return region;
    region = heaviest;
  }
}
