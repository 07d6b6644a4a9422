export { readJsonl } from './jsonl.js';
export { readWarc } from './warc.js';
export { canonicalUrlOf, contentHash, toIndexedPage } from './indexed-page.js';
export type { PageSource } from './indexed-page.js';
export { extractorOrDefault, withoutMarkdown } from './extractor.js';
export type { PageExtractor } from './extractor.js';
export type { IngestIssue, IngestOptions } from './options.js';
