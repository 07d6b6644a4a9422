/**
 * HTML → ExtractedPage: metadata, challenge detection, then the main text.
 *
 * The main text comes from Mozilla Readability over linkedom, with boilerplate removed around it:
 * before Readability, elements that are boilerplate by tag, role or class (navigation, comments,
 * share bars, captions…) are taken out so they can neither win the content score nor ride along with
 * the winner; after it, blocks of the chosen content that read as boilerplate (link lists, bylines,
 * a repeated headline) are dropped. Readability alone is strong on recall and weak on precision, so
 * every step here removes text; none adds any.
 */
import { Readability } from '@mozilla/readability';
import { convert, type HtmlToTextOptions } from 'html-to-text';
import type { ExtractedPage } from '../types.js';
import { removeBoilerplateElements, pruneExtractedContent } from './boilerplate.js';
import { isChallengePage } from './challenge.js';
import { parseDocument, type DomDocument, type DomElement } from './dom.js';
import { extractMetadata } from './metadata.js';

const HEADING_OPTIONS = { uppercase: false };

const TEXT_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  // html-to-text recurses per nesting level; absurdly deep markup would overflow the stack.
  limits: { maxDepth: 400 },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: HEADING_OPTIONS })),
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false } },
  ],
};

/** For the whole-page fallback: parts of a page that are never its main text. */
const WHOLE_PAGE_OPTIONS: HtmlToTextOptions = {
  ...TEXT_OPTIONS,
  baseElements: { selectors: ['body'] },
  selectors: [
    ...(TEXT_OPTIONS.selectors ?? []),
    ...['nav', 'header', 'footer', 'aside', 'form', 'script', 'style', 'noscript', 'template', 'svg'].map((selector) => ({
      selector,
      format: 'skip',
    })),
  ],
};

export function extractHtml(html: string, url: string): ExtractedPage {
  const document = parseDocument(html);
  const metadata = extractMetadata(document, url);
  const isChallenge = isChallengePage(document);
  return {
    title: metadata.title,
    text: isChallenge ? '' : extractMainText(document, html, url, metadata.title),
    datePublished: metadata.datePublished,
    language: metadata.language,
    canonicalUrl: metadata.canonicalUrl,
    isChallenge,
  };
}

function extractMainText(document: DomDocument, html: string, url: string, title: string | null): string {
  let text = '';
  try {
    removeBoilerplateElements(document);
    const content = runReadability(document);
    if (content) {
      pruneExtractedContent(content, title, url);
      text = htmlToText(content.innerHTML);
    }
  } catch {
    // Readability or the DOM shim failing on odd markup is not a reason to return nothing.
  }
  if (text) return text;
  try {
    return htmlToText(html, WHOLE_PAGE_OPTIONS);
  } catch {
    return '';
  }
}

function runReadability(document: DomDocument): DomElement | null {
  const reader = new Readability<DomElement>(document as never, {
    // Hand back the content element itself, so that it can be pruned as DOM before it becomes text.
    serializer: (node) => node as unknown as DomElement,
  });
  return reader.parse()?.content ?? null;
}

function htmlToText(html: string, options: HtmlToTextOptions = TEXT_OPTIONS): string {
  return convert(html, options)
    .replace(/[ \t\u00a0]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
