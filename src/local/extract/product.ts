/**
 * A product's facts as its JSON-LD states them: name, description, price and specification. Shops
 * often render these from script, so the visible markup can lack what the structured data holds.
 */
import { normalizeSpace } from './dom.js';
import { pageEntities, schemaTypes, type JsonObject } from './json-ld.js';
import { PRICE, PRODUCT_SCHEMA_TYPES } from './page-type.js';

function text(value: unknown): string {
  if (typeof value === 'string') return normalizeSpace(value.replace(/<[^>]*>/g, ' '));
  if (typeof value === 'number') return String(value);
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return text((value as JsonObject).name);
  return '';
}

function asObjects(value: unknown): JsonObject[] {
  return ([] as unknown[]).concat(value ?? []).filter((item): item is JsonObject => item !== null && typeof item === 'object' && !Array.isArray(item));
}

function priceLine(offers: unknown): string {
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
export function productFacts(jsonLd: unknown[]): ProductFacts | null {
  const product = pageEntities(jsonLd).find((entity) => schemaTypes(entity).some((type) => PRODUCT_SCHEMA_TYPES.has(type)));
  if (!product) return null;
  const specification = asObjects(product.additionalProperty)
    .map((property) => [text(property.name), text(property.value)])
    .filter(([name, value]) => name && value)
    .map(([name, value]) => `${name}: ${value}`);
  const brand = text(product.brand);
  return { lines: [text(product.name), text(product.description), brand && `Brand: ${brand}`, ...specification].filter(Boolean), price: priceLine(product.offers) };
}

/** Shorter lines are labels that the visible text may state in its own words. */
const MIN_FACT_LENGTH = 30;

/**
 * The visible text with what it lacks of the product's facts appended: a description the page only
 * has in JSON-LD, and the price when the text shows none.
 */
export function withProductFacts(visibleText: string, facts: ProductFacts): string {
  const visible = normalizeSpace(visibleText).toLowerCase();
  const missing = facts.lines.filter((line) => line.length >= MIN_FACT_LENGTH && !visible.includes(line.slice(0, MIN_FACT_LENGTH).toLowerCase()));
  if (facts.price && !PRICE.test(visibleText)) missing.push(facts.price);
  return missing.length ? [visibleText, ...missing].filter(Boolean).join('\n\n') : visibleText;
}
