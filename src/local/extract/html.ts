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
import type { ExtractedPage, PageType } from '../types.js';
import { removeBoilerplateElements, pruneExtractedContent } from './boilerplate.js';
import { isChallengePage } from './challenge.js';
import { normalizeSpace, parseDocument, type DomDocument, type DomElement } from './dom.js';
import { readJsonLdScripts } from './json-ld.js';
import { selectMainRegion } from './main-region.js';
import { extractMetadata } from './metadata.js';
import { detectPageType } from './page-type.js';
import { productFacts, withProductFacts } from './product.js';

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

export interface HtmlExtractionOptions {
  /** Skip detection and extract the page as this type (the caller knows what it fetched). */
  pageType?: PageType;
}

export function extractHtml(html: string, url: string, options: HtmlExtractionOptions = {}): ExtractedPage {
  const document = parseDocument(html);
  const jsonLd = readJsonLdScripts(document);
  const metadata = extractMetadata(document, url, jsonLd);
  const isChallenge = isChallengePage(document);
  revealNoscriptContent(document);
  const finding = detectPageType({ document, jsonLd });
  const pageType = options.pageType ?? finding.type;
  return {
    title: metadata.title,
    author: metadata.author,
    text: isChallenge ? '' : mainTextOfType(extractMainText(document, html, url, metadata.title, pageType), pageType, jsonLd),
    datePublished: metadata.datePublished,
    language: metadata.language,
    canonicalUrl: metadata.canonicalUrl,
    isChallenge,
    pageType,
  };
}

function mainTextOfType(text: string, pageType: PageType, jsonLd: unknown[]): string {
  const facts = pageType === 'product' ? productFacts(jsonLd) : null;
  return facts ? withProductFacts(text, facts) : text;
}

/**
 * Class and id words that mark a part of the content on pages of a type, not boilerplate: a post's
 * author, date and "comment" markup on a forum.
 */
const EXEMPT_WORDS: Partial<Record<PageType, ReadonlySet<string>>> = {
  forum: new Set(['comment', 'respond', 'author', 'meta', 'timestamp', 'dateline', 'byline']),
};

/** Pages whose content is many blocks: kept as a region, not as Readability's best block. */
const REGION_TYPES = new Set<PageType>(['forum', 'listing', 'product']);
/**
 * On a page of no known type, Readability's block is the content when it holds at least this share
 * of the main region's text; less, and it is one block of many (a service page's sections).
 */
const MIN_ARTICLE_SHARE_OF_REGION = 0.5;

function extractMainText(document: DomDocument, html: string, url: string, title: string | null, pageType: PageType): string {
  let text = '';
  try {
    if (REGION_TYPES.has(pageType)) {
      text = regionText(document, pageType, title, url);
    } else if (pageType === 'other') {
      const region = regionText(parseVisibleDocument(html), pageType, title, url);
      text = articleText(document, title, url);
      if (text.length < region.length * MIN_ARTICLE_SHARE_OF_REGION) text = region;
    } else {
      text = articleText(document, title, url);
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

function articleText(document: DomDocument, title: string | null, url: string): string {
  removeBoilerplateElements(document);
  const content = runReadability(document);
  if (!content) return '';
  pruneExtractedContent(content, title, url);
  return htmlToText(content.innerHTML);
}

const PRUNED_REGION_TYPES = new Set<PageType>(['forum', 'product']);

function regionText(document: DomDocument, pageType: PageType, title: string | null, url: string): string {
  removeBoilerplateElements(document, { exemptWords: EXEMPT_WORDS[pageType], keepAllArticles: true });
  const region = selectMainRegion(document);
  if (!region) return '';
  // Menus and teaser links inside a thread or a product page are not its content; on a listing, or
  // a page that may be one, link blocks are the items.
  if (PRUNED_REGION_TYPES.has(pageType)) pruneExtractedContent(region, title, url);
  return htmlToText(region.innerHTML);
}

function parseVisibleDocument(html: string): DomDocument {
  const document = parseDocument(html);
  revealNoscriptContent(document);
  return document;
}

/**
 * Pages rendered by script often carry their content for crawlers in <noscript>. When the body shows
 * next to nothing outside it, that content is the page as a reader without scripts sees it.
 */
function revealNoscriptContent(document: DomDocument): void {
  const body = document.body;
  if (!body) return;
  const noscripts = [...body.querySelectorAll('noscript')];
  if (noscripts.length === 0) return;
  const noscriptText = noscripts.reduce((sum, element) => sum + normalizeSpace(element.textContent).length, 0);
  const visibleText = normalizeSpace(body.textContent).length - noscriptText;
  if (noscriptText <= visibleText) return;
  for (const noscript of noscripts) {
    if (noscript.parentNode) noscript.replaceWith(...noscript.childNodes);
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
