/**
 * The LanceDB table that holds the pages: one row per canonical URL, with the columns the filters
 * and indexes need beside the page's own fields.
 */
import { createRequire } from 'node:module';
import { Field, FixedSizeList, Float32, Float64, List, Schema, Type, Utf8, type Vector } from 'apache-arrow';
import type { EmbeddedPage, IndexedPage, PageVectors } from '../types.js';
import { filterLabels, normalizeDomain } from './filters.js';

export const PAGES_TABLE = 'pages';

/**
 * Bumped when the table's layout changes, so an old directory is recognised rather than misread.
 * The vector columns are an optional extension of layout 2: an index written before them has none,
 * is searched by BM25 alone, and gains them (null until re-embedded) when a writer with a model
 * next writes to it. Rows written before date labels stopped at the month also carry a day label
 * ("y:2024-05-14"): the filters read years and months only, which mean the same in both, so such an
 * index is read as it is (its folds pay for the old day labels until those pages are written again).
 */
export const SCHEMA_VERSION = '2';
export const SCHEMA_VERSION_KEY = 'searchgate.schemaVersion';

/** The page's first window (its title and opening text): the column the vector index serves. */
export const VECTOR_COLUMN = 'vector';
/** The page's further windows, for scoring it by its best window. */
export const MORE_VECTORS_COLUMN = 'moreVectors';
/** The stamp of the model and windowing that made the row's vectors. */
export const VECTOR_MODEL_COLUMN = 'vectorModel';
export const VECTOR_COLUMNS = [VECTOR_COLUMN, MORE_VECTORS_COLUMN, VECTOR_MODEL_COLUMN] as const;
/**
 * The page's title embedded alone, for the hybrid scorer's title cosine. Added after the other
 * vector columns: an index with vectors made before it gains it (null in its rows) when a writer
 * with a model opens it, and its rows keep serving with their window vectors meanwhile.
 */
export const TITLE_VECTOR_COLUMN = 'titleVector';
/**
 * The page's main text as markdown, where it was extracted from HTML: served to requests that ask
 * for markdown. Read by get() and export() only, never by a search. An optional extension of layout
 * 2, like the vector columns: a writer adds it to an index made before it (null in the old rows).
 */
export const MARKDOWN_COLUMN = 'markdown';

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
  markdown?: string | null;
  vector?: Float32Array | null;
  moreVectors?: Float32Array[] | null;
  vectorModel?: string | null;
  titleVector?: Float32Array | null;
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

/**
 * The vector columns, for `dimensions`-wide vectors. `arrow` is the Arrow module whose classes the
 * receiver checks with instanceof: LanceDB loads Arrow's CommonJS build, which is another copy of
 * the classes than this ESM module's (see lanceArrow).
 */
export function vectorFields(dimensions: number, arrow: typeof import('apache-arrow') = { Field, FixedSizeList, Float32, List, Utf8 } as typeof import('apache-arrow')): Field[] {
  const vector = () => new arrow.FixedSizeList(dimensions, new arrow.Field('item', new arrow.Float32(), true));
  return [
    new arrow.Field(VECTOR_COLUMN, vector(), true),
    new arrow.Field(MORE_VECTORS_COLUMN, new arrow.List(new arrow.Field('item', vector(), true)), true),
    new arrow.Field(VECTOR_MODEL_COLUMN, new arrow.Utf8(), true),
    titleVectorField(dimensions, arrow),
  ];
}

/** The title vector column, alone: for an index whose vector columns were made before it. */
export function titleVectorField(dimensions: number, arrow: typeof import('apache-arrow') = { Field, FixedSizeList, Float32 } as typeof import('apache-arrow')): Field {
  return new arrow.Field(TITLE_VECTOR_COLUMN, new arrow.FixedSizeList(dimensions, new arrow.Field('item', new arrow.Float32(), true)), true);
}

/** Whether a table has a column: those added after a table was made (markdown, the title vector) may be missing. */
export const hasColumn = (schema: Schema, name: string): boolean => schema.fields.some((field) => field.name === name);

/** Arrow as LanceDB sees it (its CommonJS build), for the calls that check field types with instanceof. */
export const lanceArrow = createRequire(import.meta.url)('apache-arrow') as typeof import('apache-arrow');

/** The table of a new index: the page columns, and vector columns when their width is known. */
export function pageSchema(vectorDimensions: number | null): Schema {
  return new Schema([...PAGE_COLUMNS, ...(vectorDimensions === null ? [] : vectorFields(vectorDimensions))], new Map([[SCHEMA_VERSION_KEY, SCHEMA_VERSION]]));
}

const PAGE_COLUMNS = [
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
    utf8(MARKDOWN_COLUMN, true),
];

/** The markdown column, for a table made before it (LanceDB's copy of Arrow, see lanceArrow). */
export const markdownField = () => new lanceArrow.Field(MARKDOWN_COLUMN, new lanceArrow.Utf8(), true);

/** The width of a table's vectors, or null when it has no vector columns (an index built before them). */
export function vectorDimensionsOf(schema: Schema): number | null {
  const field = schema.fields.find((candidate) => candidate.name === VECTOR_COLUMN);
  // By type id, not instanceof: a table's schema comes from LanceDB's copy of Arrow (see lanceArrow).
  return field && field.type.typeId === Type.FixedSizeList ? (field.type as FixedSizeList).listSize : null;
}

/** Which optional columns a table has: a row is made with those alone. */
export interface RowColumns {
  vectors: boolean;
  titleVector: boolean;
}

export function toRow(page: IndexedPage | EmbeddedPage, revision: number, columns: RowColumns): PageRow {
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
    markdown: page.markdown ?? null,
    ...(columns.vectors ? vectorCells('vectors' in page ? page.vectors : null, columns.titleVector) : {}),
  };
}

function vectorCells(vectors: PageVectors | null, withTitleVector: boolean): Pick<PageRow, 'vector' | 'moreVectors' | 'vectorModel' | 'titleVector'> {
  const title = withTitleVector ? { titleVector: vectors?.title ?? null } : {};
  if (!vectors || vectors.windows.length === 0) return { vector: null, moreVectors: null, vectorModel: null, ...title };
  const [first, ...more] = vectors.windows;
  return { vector: first!, moreVectors: more, vectorModel: vectors.model, ...title };
}

/** A row's vectors, read from a result that selected the vector columns; null when it has none. */
export function vectorsFromArrow(table: ColumnarResult, row: number): PageVectors | null {
  const model = table.getChild(VECTOR_MODEL_COLUMN)?.get(row) as string | null | undefined;
  const first = table.getChild(VECTOR_COLUMN)?.get(row) as Vector | null | undefined;
  if (!model || !first) return null;
  const more = table.getChild(MORE_VECTORS_COLUMN)?.get(row) as Vector | null | undefined;
  const windows = [Float32Array.from(first.toArray() as ArrayLike<number>)];
  if (more) for (let i = 0; i < more.length; i++) windows.push(Float32Array.from((more.get(i) as Vector).toArray() as ArrayLike<number>));
  // Absent from a result of a table whose vector columns were made before it.
  const title = table.getChild(TITLE_VECTOR_COLUMN)?.get(row) as Vector | null | undefined;
  return { model, windows, title: title ? Float32Array.from(title.toArray() as ArrayLike<number>) : null };
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
  // Selected by get() and export() only, and absent from a table made before it.
  const markdown = table.getChild(MARKDOWN_COLUMN);
  const pages: IndexedPage[] = [];
  for (let row = 0; row < table.numRows; row++) {
    const pageMarkdown = markdown?.get(row) as string | null | undefined;
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
      ...(pageMarkdown ? { markdown: pageMarkdown } : {}),
    });
  }
  return pages;
}
