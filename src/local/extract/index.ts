/**
 * The extractor of the embedded default: fetched bytes → title, date, language, canonical URL and
 * main text with boilerplate removed, with challenge pages recognised and never returned as text.
 *
 * extractHtml and extractDocument run on the calling thread; the service runs them through an
 * ExtractorPool, which keeps them off the event loop and enforces a per-page time limit.
 */
export { extractHtml, type HtmlExtractionOptions } from './html.js';
export { extractDocument } from './document.js';
export { documentKind, type DocumentKind, type DocumentSource, type ExtractionOptions } from './document-kind.js';
export { ExtractorPool, EXTRACTOR_POOL_DEFAULTS, type ExtractorPoolOptions } from './pool.js';
export { extractPdf, type PdfText } from './pdf.js';
export { decodeBytes, detectCharset } from './decode.js';
export { isChallengePage } from './challenge.js';
export { extractMetadata, parseDate, dateFromUrl, type PageMetadata } from './metadata.js';
export { detectPageType } from './page-type.js';
export { htmlToMarkdown } from './markdown.js';
