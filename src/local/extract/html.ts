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
import { compile, type FormatCallback, type HtmlToTextOptions } from 'html-to-text';
import type { ExtractedPage, PageType } from '../types.js';
import {
  cutAtCommentsHeading,
  removeCommentChrome,
  removeBoilerplateElements,
  removeCallsToAction,
  removeHeadingPermalinks,
  removeHiddenByUtilityClass,
  removeOtherPostSections,
  OTHER_POSTS_WORDS,
  removeUnshownElements,
  pruneExtractedContent,
  removeRepeatedBlocks,
  removeRepeatedLines,
  removeTeaserArticles,
  tidyListItems,
  UNSHOWN_TAGS,
  words,
} from './boilerplate.js';
import { httpAddress, isHttpUrl } from '../fetch/url.js';
import { isChallengePage } from './challenge.js';
import { normalizedLength, parseDocument, separateCodeLines, spaceAdjacentInlineWords, type DomDocument, type DomElement } from './dom.js';
import { jsonLdOfScripts } from './json-ld.js';
import { selectMainRegion } from './main-region.js';
import { extractMetadata, findCanonicalUrl } from './metadata.js';
import { PageElements, within } from './page-elements.js';
import { PRICE, readPageType } from './page-type.js';
import { CODE_LANGUAGE_ATTRIBUTE, htmlToMarkdown, languageOfCodeClasses } from './markdown.js';
import { productFacts, removeCustomerReviewBlocks, removeOtherProductSections, withProductFacts, type ProductFacts } from './product.js';
import { cleanThread, withQuestion } from './thread.js';
import { removeListingControls, unnumberListingItems, withListingHeading } from './listing.js';
import { asParsedTree, type ParsedTree } from './parsed-tree.js';
import { measureText, repeatedSiblingGroups } from './structure.js';

const HEADING_OPTIONS = { uppercase: false };

/**
 * A table cell's text on its row's line, a space after it: "Weight 3.1 kg". Markup often has no
 * whitespace between cells, and two cells must not run together into one word.
 */
const formatTableCell: FormatCallback = (element, walk, builder) => {
  walk(element.children, builder);
  builder.addInline(' ');
};

const TABLE_ROW = { leadingLineBreaks: 1, trailingLineBreaks: 1 };

const TEXT_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  formatters: { tableCell: formatTableCell },
  // html-to-text recurses per nesting level; absurdly deep markup would overflow the stack.
  limits: { maxDepth: 400 },
  selectors: [
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: HEADING_OPTIONS })),
    // A table reads row by row, each row a line, as it was written. html-to-text's grid (its
    // dataTable format) wraps a cell at 60 characters and sets the columns side by side, so a long
    // cell beside another, or a layout table's columns, came out interleaved line by line: words
    // of two cells on one line, one sentence over many (extraction-dev, issue 22: report half
    // 0.8456 → 0.8470, 21 pages up, none down). Markdown keeps the grid, as a table.
    { selector: 'table', format: 'block' },
    { selector: 'caption', format: 'block', options: TABLE_ROW },
    { selector: 'tr', format: 'block', options: TABLE_ROW },
    { selector: 'th', format: 'tableCell' },
    { selector: 'td', format: 'tableCell' },
    // A term and its definition are two lines ("Weight" / "3.1 kg"), not one run of text.
    { selector: 'dt', format: 'block' },
    { selector: 'dd', format: 'block' },
  ],
};

/** For the whole-page fallback: parts of a page that are never its main text. */
const WHOLE_PAGE_OPTIONS: HtmlToTextOptions = {
  ...TEXT_OPTIONS,
  baseElements: { selectors: ['body'] },
  selectors: [
    ...(TEXT_OPTIONS.selectors ?? []),
    ...['nav', 'header', 'footer', 'aside', 'form', 'svg', ...UNSHOWN_TAGS].map((selector) => ({
      selector,
      format: 'skip',
    })),
  ],
};

export interface HtmlExtractionOptions {
  /** Also render the main content as markdown (ExtractedPage.markdown). */
  markdown?: boolean;
}

export function extractHtml(html: string, url: string, options: HtmlExtractionOptions = {}): ExtractedPage {
  const { document, elements: parsedElements } = parsePage(html);
  const jsonLd = jsonLdOfScripts(parsedElements.named('script'));
  const isChallenge = isChallengePage(document);
  // The page stays as it is until the extraction paths: its elements, read once (again only if
  // <noscript> content was revealed), serve its type and metadata.
  const elements = revealNoscriptContent(document, parsedElements) ? new PageElements(document) : parsedElements;
  const address = pageAddress(url, elements);
  const { type: detectedType, declaredBySchema, bodyText } = readPageType({ document, jsonLd, url: address, elements });
  const metadata = extractMetadata(document, address, jsonLd, detectedType, elements);
  const declaredProduct = detectedType === 'product' ? productFacts(jsonLd, document) : null;
  const { content: markupContent, pageType } = isChallenge
    ? { content: NO_CONTENT, pageType: detectedType }
    : typedContent(document, html, address, metadata.title, detectedType, { product: declaredProduct !== null, typeBySchema: declaredBySchema, bodyText });
  const typedPageContent = pageType === 'product' && declaredProduct ? withProductFactsContent(markupContent, declaredProduct) : markupContent;
  const content = isChallenge ? typedPageContent : withScriptShellDescription(typedPageContent, html, metadata.description);
  return {
    title: metadata.title,
    author: metadata.author,
    text: content.text,
    datePublished: metadata.datePublished,
    language: metadata.language,
    canonicalUrl: metadata.canonicalUrl,
    isChallenge,
    pageType,
    ...(options.markdown ? { markdown: markdownOf(content, linkBase(address, elements)) } : {}),
  };
}

/**
 * What the content's relative links resolve against: the page's `<base href>` where it sets one, as
 * a browser and the crawler (crawl/links.ts) resolve them, else the page's address.
 */
function linkBase(address: string, elements: PageElements): string {
  const href = elements.named('base').find((base) => base.hasAttribute('href'))?.getAttribute('href');
  return (href && httpAddress(href, address)?.href) || address;
}

/**
 * Where the page is on the web: the address it was fetched from, or, for a saved page read from a
 * file, the canonical address the page declares. Which links stay on the page's site (teasers and
 * menus) and what its address says of it (a documentation site, a front page) depend on it.
 */
function pageAddress(url: string, elements: PageElements): string {
  return isHttpUrl(url) ? url : (findCanonicalUrl(elements, url) ?? url);
}

/** The main content, as text and, for the markdown rendering, as HTML. */
interface Content {
  text: string;
  /**
   * Serialising the content cost a twentieth of a page's extraction, and only the markdown rendering
   * reads the HTML: it is made when asked for. The content's element is not changed after contentOf
   * (withoutOtherPostSections, which changes it, reads it again).
   */
  html(): string;
  /** The element the text was read from, when it was read from the page. */
  element?: DomElement;
}

const NO_CONTENT: Content = { text: '', html: () => '' };

/** Content made as HTML (a paragraph added from JSON-LD, a description), not taken from the page. */
function writtenContent(text: string, html: string): Content {
  return { text, html: () => html };
}

/**
 * The element's text and HTML, once what no reader wants of it is gone; with repeatedLines, also a
 * line shown again (a product's name and price in its purchase bar: removeRepeatedLines).
 */
function contentOf(element: DomElement | null, { repeatedLines = false } = {}): Content {
  if (element) {
    removeCallsToAction(element);
    removeCommentChrome(element);
    removeHeadingPermalinks(element);
    removeUnshownElements(element);
    tidyListItems(element);
    if (repeatedLines) removeRepeatedLines(element);
  }
  if (!element?.firstChild) return NO_CONTENT;
  let html: string | null = null;
  return { text: htmlToText(asParsedTree(element)), html: () => (html ??= element.innerHTML), element };
}

function markdownOf(content: Content, url: string): string {
  const html = content.html();
  return html ? htmlToMarkdown(html, url) : content.text;
}

/** The content with what the product's JSON-LD states and its visible markup lacks. */
function withProductFactsContent(content: Content, facts: ProductFacts): Content {
  const text = withProductFacts(content.text, facts);
  if (text === content.text) return content;
  const added = text.slice(content.text.length).trim().split('\n\n');
  return { text, html: () => `${content.html()}${added.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('')}` };
}

/**
 * A page that its scripts render (a Discourse thread, a single-page app) arrives as a shell: its body
 * shows a header line or nothing. The description it gives link previews and search engines (the
 * thread's first post, the app's summary) is then the only text a reader without scripts has, and is
 * the content. On extraction-dev (issue 22) this was 5 forum threads of the tune half and 1 of the
 * report half, each with no text before.
 */
const MAX_SCRIPT_SHELL_TEXT = 200;

function withScriptShellDescription(content: Content, html: string, description: string | null): Content {
  const contentText = normalizedLength(content.text);
  if (!description || description.length <= contentText || contentText >= MAX_SCRIPT_SHELL_TEXT) return content;
  // Extraction has taken the parsed page apart by now; the rare page this far is parsed again.
  const body = parseVisibleDocument(html).body;
  if (body && visibleTextOf(body) >= MAX_SCRIPT_SHELL_TEXT) return content;
  return writtenContent(description, `<p>${escapeHtml(description)}</p>`);
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * Class and id words that mark a part of the content on pages of a type, not boilerplate: a post's
 * author, date and "comment" markup on a forum.
 */
const EXEMPT_WORDS: Partial<Record<PageType, ReadonlySet<string>>> = {
  forum: new Set(['comment', 'respond', 'author', 'meta', 'timestamp', 'dateline', 'byline']),
};

/**
 * Pages whose content is many blocks: kept as a region, not as Readability's best block. On
 * documentation, Readability drops the code samples, tables and link lists between the paragraphs.
 */
const REGION_TYPES = new Set<PageType>(['forum', 'listing', 'product', 'documentation']);
/**
 * On a page of no known type, Readability's block is the content when it holds at least this share
 * of the main region's text; less, and it is one block of many (a service page's sections). A short
 * news brief among a site's menus and link lists holds a third of it or more: from 0.5 to 0.3,
 * extraction-dev (issue 22) gained 5 pages and lost none on the tune half, 2 and none on the report
 * half; at 0.25 and below, listings read as one of their blocks.
 */
const MIN_ARTICLE_SHARE_OF_REGION = 0.3;

/**
 * The content, and the type it was extracted as. A product page whose region held nothing but rows
 * of priced, linked items, and that declares no product of its own in JSON-LD, is a listing: its
 * price and buy buttons passed for a product's, and the rows are its items. With the product
 * region chosen again (regionContent), extraction-dev (issue 22) went from 0.8448 to 0.8456 on the
 * tune half (5 pages up) and from 0.8472 to 0.8476 on the report half (2 up), none down.
 */
function typedContent(document: DomDocument, html: string, url: string, title: string | null, pageType: PageType, declared: Declarations): { content: Content; pageType: PageType } {
  const content = extractContent(document, html, url, title, pageType, declared);
  if (content) return { content, pageType };
  return { content: extractContent(parseVisibleDocument(html), html, url, title, 'listing', NOTHING_DECLARED) ?? NO_CONTENT, pageType: 'listing' };
}

/** What the page says of itself in its structured data, which the extraction paths trust. */
interface Declarations {
  /** A product in JSON-LD: a product region of other products is chosen again, not read as a listing. */
  product: boolean;
  /** Its type in schema.org markup: an article so declared keeps Readability's block (withLeftOutProse). */
  typeBySchema: boolean;
  /** The body's visible text as its type was read (readPageType), before extraction changed the page; null if not read. */
  bodyText: number | null;
}

const NOTHING_DECLARED: Declarations = { product: false, typeBySchema: false, bodyText: null };

/** The content; null when a product page's region was only other products (see regionContent). */
function extractContent(document: DomDocument, html: string, url: string, title: string | null, pageType: PageType, declared: Declarations): Content | null {
  let content = NO_CONTENT;
  try {
    if (REGION_TYPES.has(pageType)) {
      removeSharedBoilerplate(document, pageType);
      const region = regionContent(document, pageType, title, url, declared.product);
      if (!region) return null;
      content = region;
    } else if (pageType === 'other') {
      removeSharedBoilerplate(document, pageType);
      const region = regionContent(document.cloneNode(true), pageType, title, url, false) ?? NO_CONTENT;
      content = articleContent(document, title, url);
      if (content.text.length < region.text.length * MIN_ARTICLE_SHARE_OF_REGION) content = region;
    } else {
      const pageText = declared.typeBySchema || !document.body ? 0 : (declared.bodyText ?? visibleTextOf(document.body));
      removeSharedBoilerplate(document, pageType);
      // Readability takes the page apart: a copy is kept for the region, read if the block is short.
      const cleaned = pageText > 0 ? document.cloneNode(true) : null;
      content = articleContent(document, title, url);
      if (cleaned && normalizedLength(content.text) < pageText * MIN_BLOCK_SHARE_OF_PAGE) content = withLeftOutProse(content, cleaned, title, url);
    }
  } catch {
    // Readability or the DOM shim failing on odd markup is not a reason to return nothing.
  }
  if (content.text) return withoutOtherPostSections(content, pageType);
  try {
    return writtenContent(htmlToText(html, wholePageToText), '');
  } catch {
    return NO_CONTENT;
  }
}

/**
 * The content without the lists of the site's other posts in it, read again when one went. This
 * comes after the path is chosen: the paths weigh Readability's block against the page as it was
 * chosen, and the list made part of the block's weight. On a listing, "More news" and "Latest
 * stories" head the listing's own items (a front page's teasers under its lead story); only a list
 * of related posts, which is related to one post, is not the listing's.
 */
function withoutOtherPostSections(content: Content, pageType: PageType): Content {
  try {
    if (!content.element || !OTHER_POSTS_WORDS.test(content.text)) return content;
    return removeOtherPostSections(content.element, { relatedOnly: pageType === 'listing' }) ? contentOf(content.element) : content;
  } catch {
    return content;
  }
}

/**
 * Readability keeps one block. On a page of several (a service page's sections, a listing that
 * passes for an article) it leaves the others out, and they are the lines the main region holds
 * beyond that block. Where at least one in ten of them is a paragraph (a sentence line longer than
 * MIN_PARAGRAPH_LENGTH), they are prose the block left out, and the region is the content; where
 * they are labels, links, menus and the one-line blurbs under teasers' headlines, the block is.
 * Counting every sentence line instead (at least 28% of them) took a news site's "more stories"
 * for prose. Extraction-dev (issue 22), choosing on the tune half's 123 pages that reach this test:
 * paragraphs of 120 characters gave the most (100: −0.0006, 150: −0.0004), and one in ten ties with
 * one in twelve there; against the sentence share, tune 0.8560 → 0.8576 (9 pages up, 4 down) and
 * report 0.8591 → 0.8604 (8 up, 3 down).
 */
const MIN_PARAGRAPH_SHARE_OF_LEFT_OUT_LINES = 0.1;
const MIN_PARAGRAPH_LENGTH = 120;
/**
 * A block holding at least this share of the page's text is the page's content, and the region is
 * not read: it costs a copy of the page and the region's cleaning, and this spares them on about
 * 60% of the pages read as articles, for 0.0004 of the tune half's F1. An article that declares its type in schema.org markup keeps its
 * block too (a news site's "more stories" pass for left-out prose).
 */
const MIN_BLOCK_SHARE_OF_PAGE = 0.5;
/**
 * A line that ends as a sentence does. Not with an ellipsis: that is a teaser's cut-off excerpt, and
 * a list of teasers beside an article is no prose it left out.
 */
const ENDS_AS_A_SENTENCE = /[.!?。！？]["'”’)」』）]?$/;
/** A list item's line, or a line of its text below the first (indented): an item, not running prose. */
const LIST_ITEM_LINE = /^\s+\S|^\s*(?:[*-]|\d+\.)\s/;

/** A line as its words, lower-cased: the same line rendered from two paths compares equal. */
function lineKey(line: string): string {
  return words(line).join(' ');
}

/**
 * Readability's block, or the main region where the lines it holds beyond the block are prose. The
 * region is cleaned as a listing's (no link-block prune: a service page's sections link onwards).
 */
function withLeftOutProse(article: Content, cleaned: DomDocument, title: string | null, url: string): Content {
  const region = regionContent(cleaned, 'listing', title, url, false);
  if (!region) return article;
  const kept = new Set(article.text.split('\n').filter((line) => line.trim()).map(lineKey));
  const leftOut = region.text.split('\n').filter((line) => line.trim() && !kept.has(lineKey(line)));
  const isParagraph = (line: string) => {
    const text = line.trim();
    return !LIST_ITEM_LINE.test(line) && text.length > MIN_PARAGRAPH_LENGTH && ENDS_AS_A_SENTENCE.test(text);
  };
  const paragraphs = leftOut.filter(isParagraph).length;
  return leftOut.length > 0 && paragraphs >= leftOut.length * MIN_PARAGRAPH_SHARE_OF_LEFT_OUT_LINES ? region : article;
}

/**
 * The boilerplate every path removes, before a path is chosen, so that the copy a second path reads
 * is taken after it and the page is not pre-cleaned twice: the region paths and the article path
 * differ only in teaser articles (articleContent) and in the words a type exempts, which no type
 * that takes two paths has.
 */
function removeSharedBoilerplate(document: DomDocument, pageType: PageType): void {
  removeBoilerplateElements(document, { exemptWords: EXEMPT_WORDS[pageType], keepAllArticles: true });
}

/** Readability's block of a page that removeSharedBoilerplate has cleaned. */
function articleContent(document: DomDocument, title: string | null, url: string): Content {
  removeTeaserArticles(document);
  const content = runReadability(document);
  if (content) {
    cutAtCommentsHeading(content);
    pruneExtractedContent(content, title, url);
  }
  return contentOf(content);
}

/**
 * Region types where a block repeated word for word is one block shown twice: a product section per
 * screen size, a post rendered for two layouts. (A listing's or a service page's repeats were
 * measured to be as often real.)
 */
const DEDUPLICATED_REGION_TYPES = new Set<PageType>(['forum', 'product']);

/** Region types whose link blocks are menus and teasers; on a listing they are the items. */
const PRUNED_REGION_TYPES = new Set<PageType>(['forum', 'product']);

/**
 * The main region of a page that removeSharedBoilerplate has cleaned, cleaned further for the page's
 * type. Null when a product page that declares no product had a region of nothing but other
 * products: the page is a listing (see typedContent).
 */
function regionContent(
  document: DomDocument,
  pageType: PageType,
  title: string | null,
  url: string,
  declaresProduct: boolean,
): Content | null {
  if (pageType === 'product' && document.body) removeCustomerReviewBlocks(document.body);
  const selected = selectMainRegion(document);
  const chosen = selected && document.body ? withTypeRegion(selected, document.body, pageType) : selected;
  const chosenText = chosen && pageType === 'product' ? visibleTextOf(chosen) : 0;
  let region = cleanRegion(chosen, pageType, title, url);
  if (region && pageType === 'product' && visibleTextOf(region) <= chosenText * MAX_SHARE_LEFT_OF_OTHER_PRODUCTS) {
    if (!declaresProduct) return null;
    // A shop's recommendations can outweigh its own product's text. With them gone, the region is
    // chosen again, and kept when it names the product (holds the page's h1) and holds more than a
    // header's text.
    const again = selectMainRegion(document);
    if (again && again.querySelector('h1') !== null && visibleTextOf(again) >= MIN_PRODUCT_REGION_TEXT) region = cleanRegion(again, pageType, title, url);
  }
  return contentOf(region, { repeatedLines: pageType === 'product' });
}

/**
 * A region of rows of other products leaves at most this share of its text when they are gone: their
 * headings ("Similar items"). The tune half gave the same pages from 0.02 to 0.1.
 */
const MAX_SHARE_LEFT_OF_OTHER_PRODUCTS = 0.05;
/** A product's own region (its name, price and description) holds at least this many characters. */
const MIN_PRODUCT_REGION_TEXT = 300;

/** The region widened to what the type's content starts with: a Q&A thread's question, a listing's heading. */
function withTypeRegion(region: DomElement, body: DomElement, pageType: PageType): DomElement {
  if (pageType === 'forum') return withQuestion(region, body);
  if (pageType === 'listing') return withListingHeading(region, body);
  return region;
}

function visibleTextOf(element: DomElement): number {
  return measureText(element).get(element)?.text ?? 0;
}

function cleanRegion(region: DomElement | null, pageType: PageType, title: string | null, url: string): DomElement | null {
  if (!region) return null;
  if (PRUNED_REGION_TYPES.has(pageType)) pruneExtractedContent(region, title, url, { keepPreamble: true });
  if (pageType === 'forum') cleanThread(region);
  if (DEDUPLICATED_REGION_TYPES.has(pageType)) removeRepeatedBlocks(region);
  if (pageType === 'listing') {
    removeListingControls(region);
    unnumberListingItems(region);
  }
  if (pageType === 'product') {
    removeOtherProductSections(region);
    removeOtherProducts(region);
  }
  return region;
}

/** A product page is about one product: a row of at least this many linked, priced items is others. */
const MIN_OTHER_PRODUCTS = 3;

function removeOtherProducts(region: DomElement): void {
  for (const group of repeatedSiblingGroups(region, measureText(region), MIN_OTHER_PRODUCTS)) {
    const priced = group.members.filter((member) => member.querySelector('a[href]') !== null && PRICE.test(member.textContent ?? ''));
    if (priced.length >= group.members.length * 0.6) for (const member of group.members) member.remove();
  }
}

/**
 * The page as every extraction path reads it: parsed, with highlighted code lines apart and each code
 * block's language kept; and its elements (PageElements), read once. They say which passes have
 * anything to do (code blocks, `<noscript>`, JSON-LD scripts) without a walk of the page each, and are
 * read again only where a pass took elements out.
 */
function parsePage(html: string): { document: DomDocument; elements: PageElements } {
  const document = parseDocument(html);
  const parsed = new PageElements(document);
  const hasCode = parsed.named('pre').length > 0;
  const codeRewritten = hasCode && separateCodeLines(document);
  spaceAdjacentInlineWords(document);
  const hiddenRemoved = removeHiddenByUtilityClass(document);
  if (hasCode) labelCodeLanguages(document);
  return { document, elements: codeRewritten || hiddenRemoved ? new PageElements(document) : parsed };
}

/** Keeps the language a code block's classes name in an attribute, which Readability leaves alone. */
function labelCodeLanguages(document: DomDocument): void {
  for (const pre of document.body?.querySelectorAll('pre') ?? []) {
    const code = pre.firstElementChild?.nodeName === 'CODE' ? pre.firstElementChild : null;
    const wrapper = pre.parentElement;
    const language = languageOfCodeClasses([code, pre, wrapper, wrapper?.parentElement].map((element) => element?.getAttribute('class')));
    if (language) pre.setAttribute(CODE_LANGUAGE_ATTRIBUTE, language);
  }
}

function parseVisibleDocument(html: string): DomDocument {
  const { document, elements } = parsePage(html);
  revealNoscriptContent(document, elements);
  return document;
}

/**
 * Pages rendered by script often carry their content for crawlers in <noscript>. When the body shows
 * next to nothing outside it, that content is the page as a reader without scripts sees it. Says
 * whether it revealed any (the page's elements are then others).
 */
function revealNoscriptContent(document: DomDocument, elements: PageElements): boolean {
  const body = document.body;
  if (!body) return false;
  const noscripts = within(body, elements.named('noscript'));
  if (noscripts.length === 0) return false;
  const textOf = (elements: DomElement[]) => elements.reduce((sum, element) => sum + normalizedLength(element.textContent), 0);
  const noscriptText = textOf(noscripts);
  // Most pages' <noscript> holds a tracking pixel: nothing to weigh.
  if (noscriptText === 0) return false;
  // A script's text is no text a reader sees: an app's data payload would outweigh any noscript content.
  const scriptText = textOf([...body.querySelectorAll('script, style, template')].filter((element) => element.closest('noscript') === null));
  const visibleText = normalizedLength(body.textContent) - noscriptText - scriptText;
  if (noscriptText <= visibleText) return false;
  for (const noscript of noscripts) {
    if (noscript.parentNode) noscript.replaceWith(...noscript.childNodes);
  }
  return true;
}

/**
 * Below this many characters Readability searches the whole page again with looser rules, up to
 * three more times (500 by default). The pre-clean has taken the boilerplate those rules guard
 * against, so the retries mostly cost time: at 250 the tune half's median fell by 15-19% with F1
 * unchanged to three places (3 of 679 pages moved, 1 up and 2 down).
 */
const READABILITY_CHAR_THRESHOLD = 250;

/**
 * A data table's class words about its header row ("sticky-header", MediaWiki's sortable tables):
 * Readability reads any class with "header" as an unlikely candidate and drops the element before
 * scoring, which took whole tables of results out of the articles that hold them.
 */
const TABLE_HEADER_CLASS = /header/i;

function unmarkDataTableHeaderClasses(document: DomDocument): void {
  for (const table of document.querySelectorAll('table')) {
    const classes = table.getAttribute('class');
    if (!classes || !TABLE_HEADER_CLASS.test(classes) || table.querySelector('th') === null || table.querySelector('table') !== null) continue;
    table.setAttribute('class', classes.split(/\s+/).filter((word) => !TABLE_HEADER_CLASS.test(word)).join(' '));
  }
}

function runReadability(document: DomDocument): DomElement | null {
  unmarkDataTableHeaderClasses(document);
  const reader = new Readability<DomElement>(document as never, {
    // Hand back the content element itself, so that it can be pruned as DOM before it becomes text.
    serializer: (node) => node as unknown as DomElement,
    charThreshold: READABILITY_CHAR_THRESHOLD,
  });
  return reader.parse()?.content ?? null;
}

/**
 * The converters, compiled once: html-to-text's convert() compiles its options (selectors, merged
 * defaults) on every call, a few percent of a page's extraction time.
 */
const contentToText = compile(TEXT_OPTIONS) as TextConverter;
const wholePageToText = compile(WHOLE_PAGE_OPTIONS) as TextConverter;

/** html-to-text takes a string to parse or, patched (patches/html-to-text+9.0.5.patch), a tree parsed already. */
type TextConverter = (input: string | ParsedTree) => string;

function htmlToText(input: string | ParsedTree, converter: TextConverter = contentToText): string {
  return converter(input)
    .replace(/[ \t\u00a0]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
