/**
 * The extractor as ingest and the crawler call it. An ExtractorPool has this shape, so the CLI hands
 * over a pool (extraction off the event loop, a time limit per page); without one, the extractor runs
 * on the calling thread, loaded on first use (its parsers are heavy to load).
 */
import type { ExtractionOptions } from '../extract/document-kind.js';
import type { ExtractedPage } from '../types.js';

/** What the index stores of a page beside its text: its markdown, for requests that ask for it. */
export const FOR_THE_INDEX: ExtractionOptions = { markdown: true };

export interface PageExtractor {
  /** Bytes of an HTML, PDF or text document; the extractor detects the kind and the charset. */
  extract(bytes: Uint8Array, source: { url: string; contentType?: string | null }, options?: ExtractionOptions): Promise<ExtractedPage>;
  extractHtml(html: string, url: string, options?: ExtractionOptions): ExtractedPage | Promise<ExtractedPage>;
}

/**
 * The same extractor for an index that keeps no markdown (`index add --no-markdown`): HTML ingest
 * about a fifth faster, and a smaller index (docs/benchmarks.md, "Markdown in the index").
 */
export function withoutMarkdown(extractor: PageExtractor): PageExtractor {
  return {
    extract: (bytes, source) => extractor.extract(bytes, source),
    extractHtml: (html, url) => extractor.extractHtml(html, url),
  };
}

let inThread: Promise<PageExtractor> | undefined;

/** The given extractor, else the real one on the calling thread. */
export function extractorOrDefault(extractor: PageExtractor | undefined): Promise<PageExtractor> {
  if (extractor) return Promise.resolve(extractor);
  inThread ??= import('../extract/index.js').then(({ extractDocument, extractHtml }) => ({ extract: extractDocument, extractHtml }));
  return inThread;
}
