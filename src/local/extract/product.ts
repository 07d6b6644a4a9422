/**
 * A product's facts as its JSON-LD states them: name, description, price and specification. Shops
 * often render these from script, so the visible markup can lack what the structured data holds.
 */
import { markupWords, sectionBlocks, words } from './boilerplate.js';
import { hasAncestor, normalizeSpace, normalizedLength, textOfMarkupString, type DomDocument, type DomElement } from './dom.js';
import { pageEntities, schemaTypes, type JsonObject } from './json-ld.js';
import { PRICE, PRODUCT_SCHEMA_TYPES } from './page-type.js';

/**
 * A string that a shop's template percent-encoded whole ("An%20elegant%20sofa%20…"): one run with no
 * space in it and an escaped space or punctuation mark. Decoded, it reads as the shop meant it; a link
 * among the facts reads decoded too, as a browser's address bar shows it.
 */
const PERCENT_ENCODED_TEXT = /^\S*%(?:20|2C|2E|3A|3B|0A)\S*$/i;

function decodedText(value: string): string {
  if (!PERCENT_ENCODED_TEXT.test(value)) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** A JSON-LD value as text: a string (entities and tags read as HTML), a number, or an object's name. */
function textOf(document: DomDocument, value: unknown): string {
  if (typeof value === 'string') return normalizeSpace(textOfMarkupString(document, decodedText(value)));
  if (typeof value === 'number') return String(value);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return textOf(document, (value as JsonObject).name);
  return '';
}

function asObjects(value: unknown): JsonObject[] {
  return ([] as unknown[]).concat(value ?? []).filter((item): item is JsonObject => item !== null && typeof item === 'object' && !Array.isArray(item));
}

function priceLine(offers: unknown, text: (value: unknown) => string): string {
  for (const offer of asObjects(offers)) {
    const price = text(offer.price) || text(offer.lowPrice);
    if (price) return `Price: ${[price, text(offer.priceCurrency)].filter(Boolean).join(' ')}`;
  }
  return '';
}

export interface ProductFacts {
  /** Name, description, brand and specification lines, in reading order. */
  lines: string[];
  /** "Price: 49.90 EUR", or empty. */
  price: string;
}

/** The facts of the page's own product (its first Product entity); null when it declares none. */
export function productFacts(jsonLd: unknown[], document: DomDocument): ProductFacts | null {
  const product = pageEntities(jsonLd).find((entity) => schemaTypes(entity).some((type) => PRODUCT_SCHEMA_TYPES.has(type)));
  if (!product) return null;
  const text = (value: unknown) => textOf(document, value);
  const specification = asObjects(product.additionalProperty)
    .map((property) => [text(property.name), text(property.value)])
    .filter(([name, value]) => name && value)
    .map(([name, value]) => `${name}: ${value}`);
  const brand = text(product.brand);
  const name = text(product.name);
  const description = text(product.description);
  // Shops often open the description with the name, or give the name as the description too.
  const nameLine = description.toLowerCase().startsWith(name.toLowerCase()) ? '' : name;
  return { lines: [nameLine, description, brand && `Brand: ${brand}`, ...specification].filter(Boolean), price: priceLine(product.offers, text) };
}

/**
 * A fact the visible text states in its own layout is not added again: a specification row that the
 * page shows as a table ("Burrs | 54 mm", where JSON-LD has "Burrs: 54 mm"), a description shown
 * after another opening. Compared as runs of three words, of which at least this share is shown.
 */
const MIN_SHOWN_SHARE_OF_FACT = 0.5;
const RUN_LENGTH = 3;

/** The fact's runs of RUN_LENGTH words, lower-cased. */
function wordRuns(text: string): Set<string> {
  const tokens = words(text);
  const runs = new Set<string>();
  for (let index = 0; index + RUN_LENGTH <= tokens.length; index += 1) runs.add(tokens.slice(index, index + RUN_LENGTH).join(' '));
  return runs;
}

/** At least MIN_SHOWN_SHARE_OF_FACT of the line's runs of words are in the visible text. */
function mostlyShown(line: string, visibleRuns: ReadonlySet<string>): boolean {
  const runs = wordRuns(line);
  if (runs.size === 0) return false;
  let shown = 0;
  for (const run of runs) if (visibleRuns.has(run)) shown += 1;
  return shown >= runs.size * MIN_SHOWN_SHARE_OF_FACT;
}

/** Shorter lines are labels that the visible text may state in its own words. */
const MIN_FACT_LENGTH = 30;

/**
 * The visible text with what it lacks of the product's facts appended: a description the page only
 * has in JSON-LD, and the price when the text shows none.
 */
export function withProductFacts(visibleText: string, facts: ProductFacts): string {
  const visible = normalizeSpace(visibleText).toLowerCase();
  let visibleRuns: Set<string> | null = null;
  // Its opening verbatim, or most of it in the page's own layout; the page's runs are read only when asked.
  const isShown = (line: string) => visible.includes(line.slice(0, MIN_FACT_LENGTH).toLowerCase()) || mostlyShown(line, (visibleRuns ??= wordRuns(visibleText)));
  const missing = facts.lines.filter((line) => line.length >= MIN_FACT_LENGTH && !isShown(line));
  if (facts.price && !PRICE.test(visibleText)) missing.push(facts.price);
  return missing.length ? [visibleText, ...missing].filter(Boolean).join('\n\n') : visibleText;
}

/**
 * Headings of sections about other products than the page's own: recommendations, "also viewed",
 * similar and recently viewed items, accessories sold beside it.
 */
const OTHER_PRODUCTS_HEADING = new RegExp(
  '\\b(also (viewed|bought|like|purchased)|similar (items|products)|recently viewed|related (items|products)|you (may|might) (also )?like|customers who|frequently bought|bought together|more from|other items|recommended for you|explore related|compare with similar)\\b',
  'i',
);
/**
 * Headings of the customers' own words about the product: their reviews, ratings and questions. Like
 * the comments under an article, they are not the page's text (a review site's own review is an
 * article, not a product page).
 */
const CUSTOMER_REVIEWS_HEADING = /^((top|customer|guest|user|verified) (ratings (&|and) )?reviews?\b|(ratings|stars) (&|and) reviews?\b|reviews? (for|of) this|customers say\b|customer questions\b|questions (&|and) answers\b)/i;
const HEADINGS = 'h2, h3, h4, h5, h6, [role="heading"]';
/** A heading's section holds at most this share of the region's text; more, and it is the region. */
const MAX_SECTION_SHARE = 0.5;

/**
 * Removes the sections of a product page's region whose heading announces other products. The section
 * is the heading's nearest ancestor with more text than the heading; when that is most of the region
 * (headings and content side by side), the heading and what follows it up to the next heading.
 */
export function removeOtherProductSections(region: DomElement): void {
  const regionText = normalizedLength(region.textContent);
  for (const heading of [...region.querySelectorAll(HEADINGS)]) {
    if (!heading.parentNode || !region.contains(heading)) continue;
    const headingText = normalizeSpace(heading.textContent);
    if (headingText.length > 80 || !(OTHER_PRODUCTS_HEADING.test(headingText) || CUSTOMER_REVIEWS_HEADING.test(headingText))) continue;
    let section: DomElement = heading;
    while (section.parentElement && section.parentElement !== region && normalizedLength(section.textContent) <= headingText.length) section = section.parentElement;
    const container = section === heading || normalizedLength(section.textContent) <= headingText.length ? section.parentElement : section;
    if (container && container !== region && normalizedLength(container.textContent) <= regionText * MAX_SECTION_SHARE && container.querySelector('h1') === null) {
      container.remove();
      continue;
    }
    // Flat markup: the heading, then its section's blocks as siblings.
    const blocks = sectionBlocks(section, heading.nodeName);
    const blocksText = blocks.reduce((sum, block) => sum + normalizedLength(block.textContent), 0);
    if (blocksText <= regionText * MAX_SECTION_SHARE) for (const block of blocks) block.remove();
  }
}

/**
 * A block of the customers' reviews is an element classed "reviews" ("customer-reviews",
 * "reviewsMedley", "product-reviews") holding at least this many elements classed review or reviews:
 * the reviews themselves, their stars and their texts. One element so classed is a rating summary
 * (a listing's cards carry one each), and a shop's "editorial reviews" (a book's press quotes) are
 * the product's own text.
 */
const MIN_REVIEW_PARTS = 3;
const REVIEW_WORDS = new Set(['review', 'reviews']);

function isReviewPart(element: DomElement): boolean {
  return markupWords(element).some((word) => REVIEW_WORDS.has(word));
}

/**
 * Removes the blocks of customers' reviews that no heading announces (see CUSTOMER_REVIEWS_HEADING),
 * before the product's region is chosen: a shop that prints dozens of reviews in the page would
 * otherwise have them chosen as the region.
 */
export function removeCustomerReviewBlocks(root: DomElement): void {
  const removed = new Set<DomElement>();
  for (const element of root.querySelectorAll('[class], [id]')) {
    const words = markupWords(element);
    if (!words.includes('reviews') || words.includes('editorial') || element.querySelector('h1') !== null) continue;
    if (hasAncestor(element, (ancestor) => removed.has(ancestor), root)) continue;
    let parts = 0;
    for (const descendant of element.querySelectorAll('[class], [id]')) if (isReviewPart(descendant) && ++parts >= MIN_REVIEW_PARTS) break;
    if (parts < MIN_REVIEW_PARTS) continue;
    removed.add(element);
  }
  for (const element of removed) element.remove();
}
