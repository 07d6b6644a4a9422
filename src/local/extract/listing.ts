/**
 * A listing's region: its items, with the heading that names the list and the text that introduces
 * it, without the controls around the items (the result count, sorting and filtering, pagination)
 * and without the numbers of an ordered list of items.
 */
import { nearestHolder, removeElementsByWholeText, type DomElement } from './dom.js';

/**
 * The items' container often stands apart from the page's h1 and the category's description under
 * it, and outweighs them: the region is widened to hold the h1, unless only the whole page does
 * (extraction-dev, issue 22, with removeListingControls: listing pages 0.6702 → 0.6742 on the tune
 * half, 24 up and 14 down; 0.6950 → 0.7002 on the report half, 19 up and 12 down).
 */
export function withListingHeading(region: DomElement, body: DomElement): DomElement {
  const heading = body.querySelector('h1');
  const holder = heading ? nearestHolder(region, heading) : null;
  return holder && holder !== body ? holder : region;
}

/**
 * The whole text of a listing's controls: the result count ("22 products", "Showing 1-24 of 514
 * results", "(83 items)"), the sort and filter controls ("Sort by", "Filter & Sort", "Sort: Best
 * Match") and the pagination ("Prev", "Next", "Page 1 of 2").
 */
const LISTING_CONTROL = new RegExp(
  '^(?:(?:showing|displaying|viewing)?\\s*(?:items?|results?|products?)?\\s*\\d[\\d,]*(?:\\s*(?:-|–|to)\\s*\\d[\\d,]*)?\\s*of\\s*\\d[\\d,]*.*' +
    '|\\(?\\d[\\d,]*\\+?\\)?\\s*(?:results?|products?|items?|titles?|listings?|styles?|jobs?)(?: found)?\\)?' +
    '|(?:sort|sort by|sort & filter|filter & sort|filter and sort|filters?|refine|view)(?:\\s*[:|].*)?' +
    '|prev(?:ious)?(?: page)?|next(?: page)?|page \\d+ of \\d+|\\d+ of \\d+)[.:]?$',
  'i',
);
/** Longer than this, an element is more than a control's label. */
const MAX_CONTROL_LENGTH = 60;

export function removeListingControls(region: DomElement): void {
  removeElementsByWholeText(region, 'a, b, button, div, em, h2, h3, label, legend, li, p, small, span, strong', LISTING_CONTROL, MAX_CONTROL_LENGTH);
}

/**
 * A listing's items read the same whether the region is their list or holds it: an ordered list's
 * items lose their numbers ("1.", "2."), as a list's items do when the list itself is the region
 * (extraction-dev, issue 22: listing pages 0.6742 → 0.6748 on the tune half and 0.7002 → 0.7014 on
 * the report half, 5 up and none down on each).
 */
export function unnumberListingItems(region: DomElement): void {
  for (const ordered of [...region.querySelectorAll('ol')]) {
    const list = region.ownerDocument.createElement('ul');
    while (ordered.firstChild) list.appendChild(ordered.firstChild);
    ordered.replaceWith(list);
  }
}
