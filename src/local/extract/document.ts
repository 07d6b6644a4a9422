/**
 * Fetched bytes → ExtractedPage, whatever they are: HTML, PDF or plain text. The media type comes
 * from the Content-Type header, and from the bytes themselves when the header is missing or generic.
 */
import type { ExtractedPage } from '../types.js';
import { decodeBytes } from './decode.js';
import { normalizeSpace } from './dom.js';
import { extractHtml } from './html.js';
import { detectLanguageFromScript } from './language.js';
import { extractPdf } from './pdf.js';

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
/** A plain-text document's first line is its title only when it is short enough to be one. */
const MAX_TITLE_LENGTH = 200;

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

export async function extractDocument(bytes: Uint8Array, source: DocumentSource, options: ExtractionOptions = {}): Promise<ExtractedPage> {
  const asMarkdown = (text: string) => (options.markdown ? { markdown: text } : {});
  switch (documentKind(bytes, source.contentType)) {
    case 'html':
      return extractHtml(decodeBytes(bytes, source.contentType, { html: true }), source.url, { markdown: options.markdown ?? false });
    case 'pdf': {
      const { title, text } = await extractPdf(bytes);
      return emptyPage({ title, text, language: detectLanguageFromScript(text), ...asMarkdown(text) });
    }
    case 'text': {
      const text = decodeBytes(bytes, source.contentType, { html: false }).replace(/\r\n?/g, '\n').trim();
      const firstLine = normalizeSpace(text.split('\n', 1)[0]);
      const title = firstLine && firstLine.length <= MAX_TITLE_LENGTH ? firstLine : null;
      return emptyPage({ title, text, language: detectLanguageFromScript(text), ...asMarkdown(text) });
    }
    case 'unsupported':
      return emptyPage();
  }
}
