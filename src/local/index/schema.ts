/**
 * The LanceDB table that holds the pages: one row per canonical URL, with the columns the filters
 * and indexes need beside the page's own fields.
 */
import { Field, Float64, List, Schema, Utf8, type Vector } from 'apache-arrow';
import type { IndexedPage } from '../types.js';
import { filterLabels, normalizeDomain } from './filters.js';

export const PAGES_TABLE = 'pages';

/** Bumped when the table's layout changes, so an old directory is recognised rather than misread. */
export const SCHEMA_VERSION = '2';
export const SCHEMA_VERSION_KEY = 'searchgate.schemaVersion';

export interface PageRow {
  url: string;
  canonicalUrl: string;
  title: string;
  text: string;
  datePublished: string | null;
  /** datePublished as epoch milliseconds: the date window compares numbers, not strings. */
  publishedAtMs: number | null;
  domain: string;
  /** filterLabels(domain, publishedAtMs): host suffix keys and date labels, for the filters' bitmap index. */
  filterLabels: string[];
  language: string | null;
  fetchedAt: string;
  contentHash: string;
  /**
   * When the row was written (epoch microseconds, unique per write): a page's new row is added
   * beside the old one and the old one is deleted once the new one is indexed, so for a moment
   * both exist and the higher revision is the current one.
   */
  revision: number;
}

export const PAGE_FIELDS = [
  'url',
  'canonicalUrl',
  'title',
  'text',
  'datePublished',
  'domain',
  'language',
  'fetchedAt',
  'contentHash',
] as const satisfies readonly (keyof IndexedPage & keyof PageRow)[];

const utf8 = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);

export const pageSchema = new Schema(
  [
    utf8('url'),
    utf8('canonicalUrl'),
    utf8('title'),
    utf8('text'),
    utf8('datePublished', true),
    new Field('publishedAtMs', new Float64(), true),
    utf8('domain'),
    new Field('filterLabels', new List(new Field('item', new Utf8(), true)), false),
    utf8('language', true),
    utf8('fetchedAt'),
    utf8('contentHash'),
    new Field('revision', new Float64(), false),
  ],
  new Map([[SCHEMA_VERSION_KEY, SCHEMA_VERSION]]),
);

export function toRow(page: IndexedPage, revision: number): PageRow {
  const parsed = page.datePublished === null ? NaN : Date.parse(page.datePublished);
  const publishedAtMs = Number.isFinite(parsed) ? parsed : null;
  const domain = normalizeDomain(page.domain);
  return {
    url: page.url,
    canonicalUrl: page.canonicalUrl,
    title: page.title,
    text: page.text,
    datePublished: page.datePublished,
    publishedAtMs,
    domain,
    filterLabels: filterLabels(domain, publishedAtMs),
    language: page.language,
    fetchedAt: page.fetchedAt,
    contentHash: page.contentHash,
    revision,
  };
}

/** A result table or one of its record batches. */
export interface ColumnarResult {
  readonly numRows: number;
  getChild(name: string): Vector | null;
}

/** Reads the pages out of a result (column by column: far cheaper than row proxies). */
export function pagesFromArrow(table: ColumnarResult): IndexedPage[] {
  // An empty result may come without columns at all.
  if (table.numRows === 0) return [];
  const column = (name: (typeof PAGE_FIELDS)[number]) => {
    const vector = table.getChild(name);
    if (!vector) throw new Error(`local index: result has no ${name} column`);
    return vector;
  };
  const [url, canonicalUrl, title, text, datePublished, domain, language, fetchedAt, contentHash] =
    PAGE_FIELDS.map(column);
  const pages: IndexedPage[] = [];
  for (let row = 0; row < table.numRows; row++) {
    pages.push({
      url: url!.get(row) as string,
      canonicalUrl: canonicalUrl!.get(row) as string,
      title: title!.get(row) as string,
      text: text!.get(row) as string,
      datePublished: (datePublished!.get(row) as string | null) ?? null,
      domain: domain!.get(row) as string,
      language: (language!.get(row) as string | null) ?? null,
      fetchedAt: fetchedAt!.get(row) as string,
      contentHash: contentHash!.get(row) as string,
    });
  }
  return pages;
}
