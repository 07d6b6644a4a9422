/**
 * What a document is, told from its Content-Type and its first bytes, and the page that stands for
 * one with nothing to extract. Apart from the extractors themselves: the pool that hands pages to
 * its workers needs these on its own thread, and a batch's main thread then loads no parser.
 */
import type { ExtractedPage } from '../types.js';

export interface DocumentSource {
  /** The page's final URL (after redirects): resolves relative links and dates in the path. */
  url: string;
  /** The Content-Type header as received, charset included; null or empty when absent. */
  contentType?: string | null;
}

export interface ExtractionOptions {
  /** Also render the main content as markdown (ExtractedPage.markdown); plain text and PDF text stand as they are. */
  markdown?: boolean;
}

export type DocumentKind = 'html' | 'pdf' | 'text' | 'unsupported';

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const TEXT_TYPES = new Set(['text/plain', 'text/markdown', 'text/x-markdown']);
/** Types servers send for anything they did not label: the bytes must say what they are. */
const UNLABELLED_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown']);

const SNIFF_BYTES = 1024;

export function documentKind(bytes: Uint8Array, contentType: string | null | undefined): DocumentKind {
  const mediaType = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType === 'application/pdf') return 'pdf';
  if (HTML_TYPES.has(mediaType)) return 'html';
  if (TEXT_TYPES.has(mediaType)) return 'text';
  if (!UNLABELLED_TYPES.has(mediaType)) return 'unsupported';
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, SNIFF_BYTES)).toString('latin1');
  if (head.startsWith('%PDF-')) return 'pdf';
  // Markup first, or an XML prolog or comment followed by an <html> element.
  if (/^(\xef\xbb\xbf)?\s*<(!doctype html|html|head|body|meta|title)\b/i.test(head) || /^(\xef\xbb\xbf)?\s*<[?!][\s\S]*<(!doctype html|html)\b/i.test(head)) {
    return 'html';
  }
  // Other markup (feeds, SVG, XML) is not prose; binary formats nearly all have a NUL byte early on.
  return /^\s*</.test(head) || head.includes('\u0000') ? 'unsupported' : 'text';
}

export function emptyPage(overrides: Partial<ExtractedPage> = {}): ExtractedPage {
  return { title: null, author: null, text: '', datePublished: null, language: null, canonicalUrl: null, isChallenge: false, pageType: null, ...overrides };
}
