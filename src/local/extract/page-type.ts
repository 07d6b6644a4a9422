/**
 * What kind of page this is, which decides what its main content is: an article's body, every post
 * of a thread, a product's description and specification, a listing's items.
 *
 * Structured data written for search engines (JSON-LD, microdata, og:type) is trusted first; the
 * page's structure decides when it declares nothing useful: repeated post blocks that carry an
 * author or a date, a price beside a buy button, repeated linked items, code blocks.
 */
import { httpAddress, isTrackingParameter } from '../fetch/url.js';
import type { PageType } from '../types.js';
import { CJK, ELEMENT_NODE, TEXT_NODE, hasAncestor, normalizeSpace, type DomDocument, type DomElement } from './dom.js';
import { pageEntities, schemaTypes, type JsonObject } from './json-ld.js';
import { PageElements, within } from './page-elements.js';
import { DATE_OR_TIME, markupWords } from './boilerplate.js';
import { measureText, repeatedSiblingGroups, type SiblingGroup, type TextMeasure } from './structure.js';

/** A Question alone is no thread: FAQ pages declare theirs, and a QAPage names the thread itself. */
const FORUM_SCHEMA_TYPES = new Set(['DiscussionForumPosting', 'QAPage']);
export const PRODUCT_SCHEMA_TYPES = new Set(['Product', 'ProductGroup', 'IndividualProduct', 'ProductModel', 'Vehicle', 'Car']);
const LISTING_SCHEMA_TYPES = new Set(['CollectionPage', 'SearchResultsPage', 'ItemList', 'OfferCatalog']);
const DOCUMENTATION_SCHEMA_TYPES = new Set(['TechArticle', 'APIReference', 'SoftwareSourceCode']);
const ARTICLE_SCHEMA_TYPES = /(Article|BlogPosting|Report|Review|Recipe|HowTo)$/;

/** Chrome whose text says nothing about the page's type: these tags, and these ARIA roles. */
const CHROME_TAGS = new Set(['nav', 'aside', 'footer', 'header']);
const CHROME_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary']);

function isChrome(element: DomElement): boolean {
  if (CHROME_TAGS.has(element.localName.toLowerCase())) return true;
  const role = element.getAttribute('role');
  return role !== null && CHROME_ROLES.has(role);
}

/** The element is chrome or inside it. */
function isInChrome(element: DomElement): boolean {
  return isChrome(element) || hasAncestor(element, isChrome);
}

/** The chrome elements not inside other chrome, in document order: one walk that stops at each. */
function outermostChrome(root: DomElement): DomElement[] {
  const found: DomElement[] = [];
  const visit = (element: DomElement): void => {
    for (let child = element.firstElementChild; child; child = child.nextElementSibling) {
      if (isChrome(child)) found.push(child);
      // As querySelectorAll does, a template's content is not searched.
      else if (child.localName.toLowerCase() !== 'template') visit(child);
    }
  };
  visit(root);
  return found;
}

export interface PageTypeSignals {
  document: DomDocument;
  jsonLd: unknown[];
  /** The page's address, when known: a documentation site says so in it. */
  url?: string;
  /** The page's elements, when the caller has read them (see PageElements). */
  elements?: PageElements;
}

export function detectPageType(signals: PageTypeSignals): PageType {
  return readPageType(signals).type;
}

export interface PageTypeReading {
  type: PageType;
  /** The page names its type in schema.org JSON-LD or microdata, not in og:type alone or by its structure. */
  declaredBySchema: boolean;
  /**
   * The body's visible characters (as measureText counts them), when its structure was read for the
   * type; null when the page's declaration sufficed. It holds while the page is not changed.
   */
  bodyText: number | null;
}

export function readPageType({ document, jsonLd, url, elements = new PageElements(document) }: PageTypeSignals): PageTypeReading {
  const declared = declaredPageType(elements, jsonLd);
  const body = document.body;
  // Read once, when the type needs it; widened so that its assignment inside structureOf is seen.
  let structure = null as Structure | null;
  const structureOf = (page: DomElement): Structure => (structure ??= readStructure(page));
  const type = typeOf(body, elements, declared, url, structureOf);
  const bodyText = structure && body ? (structure.measures.get(body)?.text ?? 0) : null;
  return { type, declaredBySchema: declared.type !== null && !declared.byOpenGraphOnly, bodyText };
}

function typeOf(
  body: DomElement | null,
  elements: PageElements,
  { type: declared, byOpenGraphOnly }: Declared,
  url: string | undefined,
  structureOf: (body: DomElement) => Structure,
): PageType {
  if (declared === 'article') {
    // Link aggregators and forums declare og:type article for a thread too: one with next to no prose of its own.
    if (byOpenGraphOnly && body && isBareThread(structureOf(body))) return 'forum';
    // Documentation sites declare their pages articles as often as not.
    return isDocumentationUrl(url) || (body && hasDocumentationStructure(body, elements)) ? 'documentation' : 'article';
  }
  if (declared || !body) return declared ?? 'other';
  const { measures, pageText, groups, prose, thread } = structureOf(body);
  // A thread's posts are the page. Comments under an article are not: there, more prose stands
  // outside the repeated posts (the article) than inside them.
  if (thread) {
    if (thread.proseOutside >= MIN_ARTICLE_ABOVE_COMMENTS && thread.posts.every(isInCommentsArea)) return 'article';
    if (thread.proseOutside <= thread.postProse) return 'forum';
  }
  if (groups.some((group) => isListing(group, measures, pageText, prose))) return 'listing';
  if (hasProductStructure(elements)) return 'product';
  if (isDocumentationUrl(url) || hasDocumentationStructure(body, elements)) return 'documentation';
  if (prose < ARTICLE_PROSE) return 'other';
  return isFrontPageUrl(url) ? 'listing' : 'article';
}

/** What the page's structure says: its text outside the chrome, its repeated sibling groups, its prose, its thread if any. */
interface Structure {
  measures: Map<DomElement, TextMeasure>;
  pageText: number;
  groups: SiblingGroup[];
  prose: number;
  /** The repeated posts, when they hold enough of the page's text to be a thread or its comments. */
  thread: { posts: DomElement[]; postProse: number; proseOutside: number } | null;
}

function readStructure(body: DomElement): Structure {
  const measures = measureText(body);
  const chromeText = outermostChrome(body).reduce((sum, element) => sum + (measures.get(element)?.text ?? 0), 0);
  const pageText = Math.max(1, (measures.get(body)?.text ?? 0) - chromeText);
  const groups = repeatedSiblingGroups(body, measures, 2).filter((group) => !isInChrome(group.members[0]!));
  const prose = proseLength(body);
  const posts = outermost(groups.flatMap((group) => threadPosts(group, measures)));
  const postText = posts.reduce((sum, post) => sum + textOf(post, measures), 0);
  if (postText < pageText * THREAD_SHARE_OF_PAGE) return { measures, pageText, groups, prose, thread: null };
  const postProse = posts.reduce((sum, post) => sum + proseLength(post), 0);
  return { measures, pageText, groups, prose, thread: { posts, postProse, proseOutside: prose - postProse } };
}

/**
 * At most this much prose outside the posts (a title, a link's summary): the thread is the page. A
 * blog's short post of a few sentences with its comments is still an article (500 took one such
 * "open thread" post on Zyte's article pages for a thread, and its text was lost; the tune half gave
 * the same from 250 to 800).
 */
const MAX_PROSE_BESIDE_BARE_THREAD = 250;

function isBareThread({ thread }: Structure): boolean {
  return thread !== null && thread.proseOutside <= MAX_PROSE_BESIDE_BARE_THREAD;
}

/** The elements that are not inside another of them: nested post groups count their text once. */
function outermost(elements: DomElement[]): DomElement[] {
  const chosen = new Set(elements);
  return elements.filter((element) => !hasAncestor(element, (ancestor) => chosen.has(ancestor)));
}

// ---------------------------------------------------------------------------------------------
// Declared type: JSON-LD, microdata, og:type

interface Declared {
  type: PageType | null;
  /** Declared by og:type alone, the weakest of the declarations. */
  byOpenGraphOnly: boolean;
}

function declaredPageType(elements: PageElements, jsonLd: unknown[]): Declared {
  const declared = (type: PageType | null, byOpenGraphOnly = false): Declared => ({ type, byOpenGraphOnly });
  const entities = pageEntities(jsonLd);
  const jsonLdTypes = entities.flatMap(schemaTypes);
  // Microdata: only top-level items describe the page; nested ones are its parts (an offer, a review).
  const microdataTypes = elements
    .matching('[itemscope][itemtype]')
    .filter((element) => element.parentElement?.closest('[itemscope]') == null)
    .flatMap((element) => (element.getAttribute('itemtype') ?? '').split(/\s+/).map((type) => type.replace(/^.*[/:#]/, '')));
  const types = [...jsonLdTypes, ...microdataTypes];
  const has = (set: Set<string>) => types.some((type) => set.has(type));

  if (has(FORUM_SCHEMA_TYPES)) return declared('forum');
  const products = types.filter((type) => PRODUCT_SCHEMA_TYPES.has(type)).length;
  // Several products side by side are a category page's items, not the page's own product.
  if (products >= 4 && !hasProductEntityWithOffer(entities)) return declared('listing');
  if (products > 0) return declared('product');
  if (has(DOCUMENTATION_SCHEMA_TYPES)) return declared('documentation');
  if (types.some((type) => ARTICLE_SCHEMA_TYPES.test(type))) return declared('article');
  if (has(LISTING_SCHEMA_TYPES)) return declared('listing');
  const openGraphType = (elements.namedMatching('meta', 'meta[property="og:type" i]')[0]?.getAttribute('content') ?? '').toLowerCase();
  if (/^(product|og:product|product\.item)$/.test(openGraphType)) return declared('product', true);
  if (openGraphType === 'article') return declared('article', true);
  return declared(null);
}

function hasProductEntityWithOffer(entities: JsonObject[]): boolean {
  return entities.some((entity) => schemaTypes(entity).some((type) => PRODUCT_SCHEMA_TYPES.has(type)) && entity.offers !== undefined);
}

// ---------------------------------------------------------------------------------------------
// Structure

/** Class and id words of a post in a thread or a comment list. */
const POST_WORDS = new Set(['post', 'posts', 'message', 'reply', 'replies', 'answer', 'answers', 'comment', 'thread', 'topic', 'entry', 'postbit', 'discussion', 'status', 'tweet']);
/** Dates DATE_OR_TIME leaves out: relative ones ("3 days ago") and Chinese/Japanese ones (2024年3月). */
const RELATIVE_OR_CJK_DATE = /\b\d+\s+(minutes?|hours?|days?|weeks?|months?|years?)\s+ago\b|\d{4}年\d{1,2}月/i;
/** A thread's posts, together, hold at least this share of the page's text. */
const THREAD_SHARE_OF_PAGE = 0.4;

function carriesDate(element: DomElement): boolean {
  const text = element.textContent ?? '';
  return element.querySelector('time') !== null || DATE_OR_TIME.test(text) || RELATIVE_OR_CJK_DATE.test(text);
}

function isPostLike(element: DomElement): boolean {
  if (hasPostMarkup(element)) return true;
  // In a threaded discussion each item is a post followed by its replies: the post is its first
  // child with content (an empty fold toggle may stand before it).
  for (let child = element.firstElementChild; child; child = child.nextElementSibling) {
    if (child.firstChild !== null) return hasPostMarkup(child);
  }
  return false;
}

function hasPostMarkup(element: DomElement): boolean {
  if (/Comment|Answer|Question|DiscussionForumPosting/.test(element.getAttribute('itemtype') ?? '')) return true;
  return markupWords(element).some((word) => POST_WORDS.has(word));
}

/**
 * Posts in a comments area under this much prose are an article's comments, even when they outweigh
 * it: a blog post with a long discussion is still an article.
 */
const MIN_ARTICLE_ABOVE_COMMENTS = 1500;

/** Inside a comments area ("comments", "comment-list", "respond"): replies to what stands above it. */
function isInCommentsArea(post: DomElement): boolean {
  for (let ancestor = post.parentElement; ancestor; ancestor = ancestor.parentElement) {
    if (markupWords(ancestor).some((word) => word.startsWith('comment') || word === 'respond')) return true;
  }
  return false;
}

/** The group's members that are posts, when the group is a thread's: at least two, and most of its members. */
function threadPosts(group: SiblingGroup, measures: Map<DomElement, TextMeasure>): DomElement[] {
  const posts = group.members.filter((member) => isPostLike(member) && carriesDate(member) && textOf(member, measures) > linkTextOf(member, measures) * 2);
  return posts.length >= 2 && posts.length >= group.members.length * 0.5 ? posts : [];
}

/** A listing's items hold at least this share of the page's text… */
const LISTING_SHARE_OF_PAGE = 0.35;
const MIN_LISTING_ITEMS = 4;
/**
 * …and each is short: a title and a few lines, not a section of an article. At 600 an article's run
 * of short sections (a news page's related-story blocks, a blog's list of tips with a paragraph
 * each) passed for a listing; the tune half gave 300: -0.0008, 400: +0.0007, 500: +0.0001, 900: -0.0014.
 */
const MAX_MEAN_ITEM_TEXT = 400;

/**
 * A listing's items are alike: one that holds more than this share of the items' text is an article
 * beside a few boxes (a story's header, body, share bar and tags as sibling blocks), whose mean
 * length a long body and short boxes keep under MAX_MEAN_ITEM_TEXT. The tune half gave the same
 * from 0.5 to 0.7 (+0.0003; 0.4: +0.0002).
 */
const MAX_ITEM_SHARE_OF_ITEMS = 0.5;

/** Items with next to no text besides their link are a menu or a link list, not a listing's items. */
const MAX_ITEM_LINK_SHARE = 0.85;

function isListing(group: SiblingGroup, measures: Map<DomElement, TextMeasure>, pageText: number, prose: number): boolean {
  if (group.members.length < MIN_LISTING_ITEMS || group.text < pageText * LISTING_SHARE_OF_PAGE) return false;
  if (group.members[0]!.nodeName === 'P' || group.members[0]!.nodeName === 'TR') return false;
  if (group.text / group.members.length > MAX_MEAN_ITEM_TEXT) return false;
  if (group.members.some((member) => textOf(member, measures) > group.text * MAX_ITEM_SHARE_OF_ITEMS)) return false;
  const linkText = group.members.reduce((sum, member) => sum + linkTextOf(member, measures), 0);
  if (linkText > group.text * MAX_ITEM_LINK_SHARE) return false;
  // Prose elsewhere that outweighs the items is an article with a list in or beside it.
  if (prose - proseInside(group) > group.text) return false;
  const linked = group.members.filter((member) => member.querySelector('a[href]') !== null || member.closest('a[href]') !== null);
  return linked.length >= group.members.length * 0.7;
}

function textOf(element: DomElement, measures: Map<DomElement, TextMeasure>): number {
  return measures.get(element)?.text ?? 0;
}

function linkTextOf(element: DomElement, measures: Map<DomElement, TextMeasure>): number {
  return measures.get(element)?.linkText ?? 0;
}

/** "$1,299.00", "€ 49,95", "£12", "1 299 kr", "¥5000", "USD 20". */
export const PRICE = /(?:[$€£¥₹₩]|\b(?:USD|EUR|GBP|CAD|AUD|CHF|JPY|CNY|INR|SEK|NOK|DKK|PLN|RS\.?)\s?)\s?\d[\d.,\s]*\d?|\b\d[\d.,]*\s?(?:[$€£¥₹]|kr|zł|Kč|руб)(?!\w)/i;
/** Class and id words of a buy button or form. */
const BUY_WORDS = new Set(['cart', 'basket', 'bag', 'buy', 'checkout', 'purchase', 'addtocart', 'addtobag', 'addtobasket']);

function hasProductStructure(elements: PageElements): boolean {
  const prices = elements.matching('[itemprop="price" i], [class*="price" i], [id*="price" i]').filter((element) =>
    PRICE.test(normalizeSpace(element.getAttribute('content') ?? element.textContent)),
  );
  if (prices.length === 0) return false;
  const buyControls = elements.matching('button, form, input[type="submit" i], a[class], div[class]').filter((element) =>
    markupWords(element).some((word) => BUY_WORDS.has(word)),
  );
  return buyControls.length > 0;
}

/**
 * Where sites put their documentation: a docs., developer(s). or learn. host, or a /docs/, /doc/,
 * /documentation/, /manual/, /handbook/, /reference/ or /api/ folder. A documentation page without
 * code samples (an overview, a landing page of linked topics, a settings reference) is still one:
 * Readability keeps its longest run of paragraphs and drops the topic cards, lists and tables around
 * it. /guide(s)/ and /tutorial(s)/ were measured and left out: news and shop sites file their
 * buying guides and how-to articles there. /wiki/ is an encyclopedia's article as often as a manual.
 */
const DOCUMENTATION_HOST = /^(docs|developers?|learn)\./i;
const DOCUMENTATION_PATH = /\/(docs?|documentation|manual|handbook|reference|api)(\/|$)/i;

// A file read from disk says nothing by its path: only a web page's address is read.
function isDocumentationUrl(url: string | undefined): boolean {
  const address = httpAddress(url);
  return address !== null && (DOCUMENTATION_HOST.test(address.hostname) || DOCUMENTATION_PATH.test(address.pathname));
}

/**
 * A site's front page (the path /) lists what the site holds: a news site's lead stories, a blog's
 * latest posts, a shop's departments, a service's sections. Its prose is its teasers', not one
 * article's: Readability would keep the teaser with the most text. A front page that declares itself
 * an article keeps that type (a site may mean its one big story). Its query may say how the visitor
 * came or which page of the list this is; any other parameter may name one post (WordPress's
 * "/?p=123"), and then the address says nothing.
 */
function isFrontPageUrl(url: string | undefined): boolean {
  const address = httpAddress(url);
  return address?.pathname === '/' && [...address.searchParams.keys()].every((name) => isTrackingParameter(name) || FRONT_PAGE_PARAMETER.test(name));
}

/**
 * Beside the tracking parameters the index drops: the page of the list, and the referrals that
 * shops and search engines add (Google's srsltid, ref, source).
 */
const FRONT_PAGE_PARAMETER = /^(?:srsltid|ref|source|page|paged|start|start_from|offset)$/i;

const CODE_BLOCKS = 'pre, code, .highlight, .codehilite';
const MIN_CODE_BLOCKS = 2;

function hasDocumentationStructure(body: DomElement, elements: PageElements): boolean {
  return within(body, elements.named('pre')).length >= MIN_CODE_BLOCKS || within(body, elements.matching(CODE_BLOCKS)).length >= MIN_CODE_BLOCKS * 5;
}

/**
 * A text run this long outside links reads as a sentence rather than a label. Chinese, Japanese and
 * Korean say as much in about a third of the characters, so their runs count three times.
 */
const MIN_PROSE_RUN = 80;
const CJK_CHARACTER_WEIGHT = 3;
/** A page with this much prose (characters in sentence-long runs) is an article unless it says otherwise. */
const ARTICLE_PROSE = 600;

function proseRunLength(text: string): number {
  // Most text nodes are white space between tags: too short to be a run however they are read.
  if (text.length * CJK_CHARACTER_WEIGHT < MIN_PROSE_RUN) return 0;
  const run = normalizeSpace(text);
  const length = CJK.test(run.slice(0, 20)) ? run.length * CJK_CHARACTER_WEIGHT : run.length;
  return length >= MIN_PROSE_RUN ? length : 0;
}

/** Characters of prose under the element: text runs long enough to be sentences, outside links. */
function proseLength(root: DomElement): number {
  let total = 0;
  const visit = (element: DomElement): void => {
    for (let child = element.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === TEXT_NODE) total += proseRunLength(child.textContent ?? '');
      else if (child.nodeType === ELEMENT_NODE && !NOT_PROSE.has(child.nodeName)) visit(child as DomElement);
    }
  };
  visit(root);
  return total;
}

function proseInside(group: SiblingGroup): number {
  return group.members.reduce((sum, member) => sum + proseLength(member), 0);
}

const NOT_PROSE = new Set(['A', 'SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG', 'NAV', 'ASIDE', 'FOOTER', 'HEADER', 'BUTTON', 'SELECT', 'OPTION']);
