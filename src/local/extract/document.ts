/**
 * Fetched bytes → ExtractedPage, whatever they are: HTML, PDF or plain text. The media type comes
 * from the Content-Type header, and from the bytes themselves when the header is missing or generic.
 */
import type { ExtractedPage } from '../types.js';
import { documentKind, emptyPage, type DocumentSource, type ExtractionOptions } from './document-kind.js';
import { decodeBytes } from './decode.js';
import { normalizeSpace } from './dom.js';
import { extractHtml } from './html.js';
import { detectLanguageFromScript } from './language.js';
import { extractPdf } from './pdf.js';

/** A plain-text document's first line is its title only when it is short enough to be one. */
const MAX_TITLE_LENGTH = 200;

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
