/**
 * JSON-LD as publishers write it: several scripts a page, objects nested in @graph, arrays, CDATA or
 * comment wrappers and raw control characters in strings.
 */
import type { DomDocument, DomElement } from './dom.js';

export type JsonObject = Record<string, unknown>;

export function parseJsonLenient(source: string): unknown {
  // Publishers wrap JSON-LD in CDATA or HTML comments and leave raw control characters in strings.
  const cleaned = source
    .replace(/^\s*(<!\[CDATA\[|<!--)/, '')
    .replace(/(\]\]>|-->)\s*$/, '')
    .replace(/[\u0000-\u001f]+/g, ' ');
  try {
    return JSON.parse(cleaned);
  } catch {
    return undefined;
  }
}

/** The parsed content of every JSON-LD script of the page, unparsable ones left out. */
export function readJsonLdScripts(document: DomDocument): unknown[] {
  return jsonLdOfScripts(document.querySelectorAll('script'));
}

/** The same, of the page's `<script>` elements as `querySelectorAll('script')` gives them (PageElements' `named('script')`). */
export function jsonLdOfScripts(scripts: Iterable<DomElement>): unknown[] {
  const parsed: unknown[] = [];
  // By tag, then type, as `script[type="application/ld+json" i]` matches.
  for (const script of scripts) {
    if (script.getAttribute('type')?.toLowerCase() !== 'application/ld+json') continue;
    const value = parseJsonLenient(script.textContent ?? '');
    if (value !== undefined) parsed.push(value);
  }
  return parsed;
}

/** Containers that hold the page's own entity; itemListElement and the like hold other pages'. */
export const NESTED_ENTITY_KEYS = ['@graph', 'mainEntity', 'mainEntityOfPage'];
const MAX_JSON_LD_DEPTH = 4;

/**
 * The objects that describe the page itself: top-level objects, and those nested in @graph or
 * mainEntity, in document order.
 */
export function pageEntities(scripts: unknown[]): JsonObject[] {
  const found: JsonObject[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (depth > MAX_JSON_LD_DEPTH || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1);
      return;
    }
    const object = value as JsonObject;
    found.push(object);
    for (const key of NESTED_ENTITY_KEYS) visit(object[key], depth + 1);
  };
  for (const script of scripts) visit(script, 0);
  return found;
}

export function schemaTypes(object: JsonObject): string[] {
  return ([] as unknown[])
    .concat(object['@type'] ?? [])
    .filter((type): type is string => typeof type === 'string')
    .map((type) => type.replace(/^.*[/:#]/, ''));
}
