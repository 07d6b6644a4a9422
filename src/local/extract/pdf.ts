/**
 * PDF → text with pdf.js (the legacy build, which runs on Node). pdf.js is large, so it is loaded on
 * the first PDF rather than when the extractor starts.
 */
import { normalizeSpace } from './dom.js';

export interface PdfText {
  title: string | null;
  text: string;
}

/** Enough for reports and papers; a 2,000-page manual is not one search result's text. */
const MAX_PAGES = 300;
/** A vertical step this many times the font size leaves the paragraph (line spacing is ~1.2). */
const PARAGRAPH_GAP_RATIO = 1.6;

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | undefined;

interface PositionedText {
  str: string;
  hasEOL: boolean;
  /** pdf.js's transform matrix: [scaleX, skewX, skewY, scaleY, x, y]. */
  transform: number[];
  height: number;
}

export async function extractPdf(bytes: Uint8Array): Promise<PdfText> {
  pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  const { getDocument } = await pdfjs;
  const loading = getDocument({
    // pdf.js may detach the buffer it is given; the caller keeps theirs.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  const document = await loading.promise;
  try {
    const pages: string[] = [];
    for (let number = 1; number <= Math.min(document.numPages, MAX_PAGES); number += 1) {
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      pages.push(pageText(content.items.filter((item): item is PositionedText & typeof item => 'str' in item)));
      page.cleanup();
    }
    return { title: await documentTitle(document), text: pages.filter(Boolean).join('\n\n') };
  } finally {
    await loading.destroy();
  }
}

/** Lines from pdf.js's end-of-line marks, paragraphs from vertical gaps larger than line spacing. */
function pageText(items: PositionedText[]): string {
  const paragraphs: string[] = [];
  let line = '';
  let paragraph: string[] = [];
  let previousY: number | null = null;
  const endParagraph = () => {
    if (paragraph.length > 0) paragraphs.push(paragraph.join('\n'));
    paragraph = [];
  };
  for (const item of items) {
    const y = item.transform[5] ?? 0;
    const fontSize = item.height || Math.abs(item.transform[3] ?? 0) || 10;
    if (previousY !== null && line === '' && Math.abs(previousY - y) > fontSize * PARAGRAPH_GAP_RATIO) endParagraph();
    line += item.str;
    if (item.hasEOL) {
      if (line.trim()) paragraph.push(normalizeSpace(line));
      line = '';
      previousY = y;
    }
  }
  if (line.trim()) paragraph.push(normalizeSpace(line));
  endParagraph();
  return paragraphs.join('\n\n');
}

interface PdfInfo {
  Title?: unknown;
}

async function documentTitle(document: { getMetadata(): Promise<{ info: object; metadata: { get(name: string): unknown } | null }> }): Promise<string | null> {
  try {
    const { info, metadata } = await document.getMetadata();
    const candidates = [(info as PdfInfo).Title, metadata?.get('dc:title')];
    for (const candidate of candidates) {
      const title = typeof candidate === 'string' ? normalizeSpace(candidate) : '';
      if (title) return title;
    }
  } catch {
    // Broken metadata leaves the text usable.
  }
  return null;
}
