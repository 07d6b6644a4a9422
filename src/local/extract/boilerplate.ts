/**
 * Boilerplate removal around Readability: a DOM pre-clean before it runs, and a prune of the content
 * it picks. Both work from markup conventions shared across the web (semantic tags, ARIA roles, the
 * class and id words that CMSs and themes use), never from anything specific to one site.
 */
import { CJK_CHARACTER, ELEMENT_NODE, INLINE_ELEMENTS, TEXT_NODE, hasAncestor, normalizeSpace, normalizedLength, removeElementsByWholeText, shortElements, type DomDocument, type DomElement, type DomNode } from './dom.js';
import { blockSignature, measureText } from './structure.js';

// ---------------------------------------------------------------------------------------------
// Pre-clean: boilerplate by tag, role and class, removed before Readability scores the page

/** Tags that hold navigation, chrome or interactive widgets rather than prose. */
const BOILERPLATE_TAGS = new Set(['nav', 'aside', 'footer', 'form', 'button', 'dialog', 'figcaption', 'template', 'select', 'textarea', 'input', 'label']);

const FORM_CONTROLS = 'input:not([type="hidden"]), textarea, select, button';

const BOILERPLATE_ROLES = new Set(['navigation', 'complementary', 'contentinfo', 'banner', 'search', 'dialog', 'alertdialog', 'menu', 'menubar', 'toolbar']);

/**
 * Class/id words that mark boilerplate when a word starts with them ("relatedPosts", "share-bar",
 * "comments-area", "newsletterSignup"). Not "caption": WordPress's `wp-caption` and most
 * `caption` classes wrap a photo with the sentence that describes it, and most sources count that
 * sentence as the article's (extraction-dev, issue 22: tune +0.0010, report +0.0012 without the
 * word). A `<figcaption>` stays out: keeping it too cost the report half 0.0003. A tooltip's or a
 * popover's text shows on hover or click beside the words it explains, as a modal's or a popup's does
 * over the page (how a delivery date is estimated, a free trial's terms, a company's card):
 * tune +0.0005 (8 pages up, 3 down), report +0.0002 (9 up, 4 down).
 */
const BOILERPLATE_WORD_PREFIXES = [
  'comment', 'disqus', 'respond', 'related', 'share', 'sharing', 'social', 'newsletter', 'promo', 'subscri',
  'cookie', 'consent', 'sidebar', 'breadcrumb', 'byline', 'outbrain', 'taboola', 'recommend',
  'trending', 'paywall', 'advert', 'sponsor', 'popular', 'signup', 'widget', 'masthead', 'toolbar',
  'tooltip', 'popover',
];

/**
 * Class/id words that mark boilerplate only as whole words ("ad" must not match "header"). "foot" is
 * the older sites' short name for the footer ("#foot", the BBC's "blq-foot"), and only as a word of
 * its own: a "footnote" is the article's. "postmetadata" is "meta" as WordPress's default theme of
 * old (Kubrick) and the themes built on it write it, in one word: the line under a post that says
 * when it was posted, what it is filed under and where to follow its responses (tune and report
 * half: one page up each, none down).
 */
const BOILERPLATE_WORDS = new Set([
  'ad', 'ads', 'adslot', 'banner', 'nav', 'navbar', 'menu', 'footer', 'foot', 'tags', 'tag', 'meta', 'credit', 'credits',
  'postmetadata', 'author', 'dateline', 'timestamp', 'hidden', 'sr', 'sronly', 'visuallyhidden', 'print', 'noprint', 'modal', 'popup', 'signature',
  // Screen-reader text under other names: eBay's "clipped" (after every link, a note that it opens
  // a new window), Amazon's "a-offscreen", "screenreader"; the split "screen-reader-text" (WordPress,
  // WooCommerce) and "screen-reader-only" are read as one word in boilerplateWords.
  'screenreader', 'clipped', 'offscreen',
]);

/**
 * An id that opens with "secondary" names the page's second column or its second menu: WordPress's
 * themes call their sidebar `#secondary` (and their content `#primary`), and other sites have their
 * `#secondaryNav` or `#secondaryContent`. Only the id: as a class, "secondary" is mostly a colour or a
 * button's style (Bootstrap's `text-secondary`, `btn-secondary`), on the content as much as beside it.
 */
const SECONDARY_COLUMN_ID = /^secondary(?![a-z])/;

/**
 * Bootstrap's and Stack Overflow's utility class for `display: none`. With a display class for a
 * larger screen beside it ("d-none d-md-block") the element shows on a desktop, as readers see it.
 */
const HIDDEN_UTILITY = 'd-none';
const SHOWN_FROM_BREAKPOINT = /(?:^|\s)d-(?:sm|md|lg|xl|xxl)-(?:block|flex|inline|inline-block|inline-flex|grid|table|table-cell|table-row)(?:\s|$)/;

/**
 * Removes what the page's utility classes hide from every reader: the machine-readable copies of a
 * post's author and date that Q&A sites keep beside the shown ones, hidden alternatives of a card.
 * Says whether it removed any.
 */
export function removeHiddenByUtilityClass(document: DomDocument): boolean {
  let removed = false;
  for (const element of [...(document.body?.querySelectorAll(`.${HIDDEN_UTILITY}`) ?? [])]) {
    if (SHOWN_FROM_BREAKPOINT.test(element.getAttribute('class') ?? '')) continue;
    element.remove();
    removed = true;
  }
  return removed;
}

/** An element holding more than this share of the page's prose is a wrapper of the article. */
const WRAPPER_SHARE_OF_PROSE = 0.5;
/**
 * The same for an element holding a headline (<h1>) and this share of the page's prose: the article,
 * whatever its class says ("entry author-jane"), even when its comments outweigh it. A dialog with a
 * headline (terms of use in a popup) is still a popup.
 */
const HEADLINED_SHARE_OF_PROSE = 0.25;

/**
 * Classes CMSs derive from a post's taxonomy ("tag-diy", "category-news", WordPress's post_class())
 * describe what the post is about, not what the element is; "tag-comments" must not read as comments.
 * A custom taxonomy's classes carry its name, which has underscores: WooCommerce puts
 * "product_tag-mugs" and "product_cat-cups" on every product of a shop, its grid's cards included.
 * A bare "cat-" is no taxonomy's: "cat-nav" is a category menu.
 */
const TAXONOMY_CLASS = /^(?:tag|category|format|type|status|[a-z\d]+_(?:tag|cat|category))-/i;
/**
 * Classes that hide a part of the element or clip it, not the element: Drupal's "field--label-hidden"
 * (a field whose label is not shown), utility classes such as "overflow-hidden". Read as "hidden"
 * they took whole product descriptions and article bodies away.
 */
const PART_HIDDEN_CLASS = /(label|labels|title|overflow|overflow-[xy]|scrollbar)[-_]+hidden$/i;

/**
 * Utility classes with a variant or an arbitrary value ("md:hidden", "top-[var(--nav-height)]") style
 * the element for one screen size or state, or name a CSS variable; they say nothing of what it is.
 * Nor do Tailwind's named groups and fractions: "group/tooltip" marks the label that a tooltip
 * appears over (the tooltip is another element), "w-1/2" a width.
 */
const UTILITY_CLASS = /[:[/]/;

const WORD_SPLIT = /[^a-z0-9]+/;

/**
 * The words of recent id and class strings. A page repeats the same few class strings on hundreds of
 * elements, and each is asked about several times (boilerplate, posts, buy buttons). They are kept
 * by the attribute strings themselves, id then classes: V8 keeps a string's hash with the string, so
 * asking again about an element costs no hashing, where a key joined from the two was a new string
 * to hash every time.
 */
const markupWordsOf = new Map<string, Map<string, readonly string[]>>();
let rememberedMarkup = 0;
const MAX_REMEMBERED_MARKUP = 4096;

/** Splits id and classes "relatedPosts jp-share_bar" into ["related", "posts", "jp", "share", "bar"]. */
export function markupWords(element: DomElement): readonly string[] {
  const id = element.id;
  // An <svg>'s className is an object, read as text as a template string reads it.
  const classes = String(element.className);
  let byClasses = markupWordsOf.get(id);
  let words = byClasses?.get(classes);
  if (words === undefined) {
    const markup = `${id} ${classes}`;
    const tokens = markup.split(/\s+/).filter((token) => token && !TAXONOMY_CLASS.test(token) && !PART_HIDDEN_CLASS.test(token) && !UTILITY_CLASS.test(token));
    words = tokens.join(' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(WORD_SPLIT).filter(Boolean);
    if (rememberedMarkup >= MAX_REMEMBERED_MARKUP) {
      markupWordsOf.clear();
      rememberedMarkup = 0;
      byClasses = undefined;
    }
    if (!byClasses) markupWordsOf.set(id, (byClasses = new Map()));
    byClasses.set(classes, words);
    rememberedMarkup += 1;
  }
  return words;
}

/**
 * The boilerplate words (or word prefixes) of the element's class and id. Words in `exempt` do not
 * count: on a forum "comment" and "author" mark the posts themselves.
 */
function boilerplateWords(element: DomElement, exempt: ReadonlySet<string>): readonly string[] {
  const markupKeys = boilerplateKeys(markupWords(element));
  const keys = SECONDARY_COLUMN_ID.test(element.id) ? [...markupKeys, 'secondary'] : markupKeys;
  return exempt.size === 0 ? keys : keys.filter((key) => !exempt.has(key));
}

/**
 * The boilerplate keys of a list of markup words, once per list: markupWords hands out the same list
 * for the same class string, and matching each word against every prefix was a few per cent of a
 * page's extraction.
 */
const boilerplateKeysOf = new WeakMap<readonly string[], readonly string[]>();

function boilerplateKeys(words: readonly string[]): readonly string[] {
  const known = boilerplateKeysOf.get(words);
  if (known) return known;
  const keys: string[] = [];
  for (const [index, word] of words.entries()) {
    // A shop's "price-tag" shows the price, not a list of tags.
    if (word === 'tag' && words[index - 1] === 'price') continue;
    const key =
      word === 'screen' && words[index + 1] === 'reader'
        ? 'screenreader'
        : BOILERPLATE_WORDS.has(word)
          ? word
          : BOILERPLATE_WORD_PREFIXES.find((candidate) => word.startsWith(candidate));
    if (key !== undefined && !keys.includes(key)) keys.push(key);
  }
  boilerplateKeysOf.set(words, keys);
  return keys;
}

const NO_EXEMPTIONS: ReadonlySet<string> = new Set();

function isDialog(element: DomElement): boolean {
  const role = element.getAttribute('role')?.toLowerCase();
  return element.localName === 'dialog' || role === 'dialog' || role === 'alertdialog';
}

/** Boilerplate by its tag or its ARIA role. */
function isBoilerplateByTagOrRole(element: DomElement): boolean {
  // A form without a control to fill in wraps content: a forum's moderation form around its posts.
  if (element.localName === 'form') return element.querySelector(FORM_CONTROLS) !== null;
  if (BOILERPLATE_TAGS.has(element.localName)) return true;
  const role = element.getAttribute('role');
  return role !== null && BOILERPLATE_ROLES.has(role.toLowerCase());
}

/** A text run at least this long, outside a link, reads as prose rather than a label or a menu item. */
const MIN_PROSE_RUN = 40;
const NON_CONTENT_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'SVG']);

/**
 * Characters of prose under each element: text runs long enough to be sentences, outside links and
 * scripts. One bottom-up pass, so checking any element afterwards is a lookup.
 */
function measureProse(root: DomElement): Map<DomElement, number> {
  const prose = new Map<DomElement, number>();
  const visit = (element: DomElement, insideLink: boolean): number => {
    let total = 0;
    for (let child = element.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === TEXT_NODE) {
        const text = insideLink ? '' : (child.textContent ?? '');
        // Space-normalised text is never longer: most text nodes (white space between tags) stop here.
        if (text.length < MIN_PROSE_RUN) continue;
        const length = normalizedLength(text);
        if (length >= MIN_PROSE_RUN) total += length;
      } else if (child.nodeType === ELEMENT_NODE && !NON_CONTENT_TAGS.has(child.nodeName)) {
        total += visit(child as DomElement, insideLink || child.nodeName === 'A');
      }
    }
    prose.set(element, total);
    return total;
  };
  visit(root, false);
  return prose;
}

/**
 * Removes boilerplate elements before Readability scores the page. An element that holds most of
 * the page's prose is a wrapper, whatever its class says ("page has-sidebar", Blogger's "widget
 * Blog"), and stays.
 */
export interface BoilerplateOptions {
  /** Class and id words that do not mark boilerplate on this page (see boilerplateWords). */
  exemptWords?: ReadonlySet<string>;
  /** Several <article> elements are the page's items or posts, not one article and teasers. */
  keepAllArticles?: boolean;
}

export function removeBoilerplateElements(document: DomDocument, options: BoilerplateOptions = {}): void {
  const body = document.body;
  if (!body) return;
  const prose = measureProse(body);
  const pageProse = prose.get(body) ?? 0;
  const shareOfProse = (element: DomElement) => (prose.get(element) ?? 0) / pageProse;

  // One pass over the elements (a selector per kind walked the tree three times). The order of
  // removal does not matter: an element inside a removed one goes with it either way.
  const exempt = options.exemptWords ?? NO_EXEMPTIONS;
  const byTagOrRole: DomElement[] = [];
  const byWord = new Map<string, DomElement[]>();
  const wordsOf = new Map<DomElement, readonly string[]>();
  const insideCode = codeTokens(body);
  for (const element of body.querySelectorAll('*')) {
    if (isBoilerplateByTagOrRole(element)) {
      byTagOrRole.push(element);
      continue;
    }
    if ((element.id === '' && element.className === '') || insideCode.has(element)) continue;
    const words = boilerplateWords(element, exempt);
    // Content whatever its words say: the declared post, and a word or link inside a sentence.
    if (words.length === 0 || isDeclaredPost(element) || (isPartOfASentence(element) && !words.some((word) => UNSHOWN_WORDS.has(word)))) continue;
    wordsOf.set(element, words);
    for (const word of words) {
      const elements = byWord.get(word);
      if (elements) elements.push(element);
      else byWord.set(word, [element]);
    }
  }
  // A word that marks blocks holding most of the page's prose between them is how this page's
  // layout names its blocks (a page builder's "elementor-widget" on every text block), not boilerplate.
  // Comments and sidebars are no such vocabulary: a long comment thread can outweigh its article.
  const layoutWords = new Set(
    [...byWord]
      .filter(([word, elements]) => !NEVER_LAYOUT_WORDS.has(word) && outermostProse(elements, prose) > pageProse * WRAPPER_SHARE_OF_PROSE)
      .map(([word]) => word),
  );
  const byWords = [...wordsOf].filter(([, words]) => words.some((word) => !layoutWords.has(word))).map(([element]) => element);
  const isReply = (element: DomElement) => wordsOf.get(element)?.some((word) => REPLY_WORDS.has(word)) ?? false;
  for (const element of [...byTagOrRole, ...byWords]) {
    if (!element.parentNode) continue;
    const share = shareOfProse(element);
    const headlined = () => element.querySelector('h1') !== null;
    // A dialog is a popup however much it says: a consent centre can outweigh a short post. A reply in
    // a block of replies is a reader's, however long: a short post can be outweighed by one comment.
    // A <footer> is the closing matter of the page or of a section: a blog's advertising terms, licence
    // and code of ethics can outweigh a post of a few lines. A reply or a footer that holds the
    // headline wraps the article (a theme misusing the class or the tag), and the share rules read it.
    const replyOrFooter = element.localName === 'footer' || (isReply(element) && hasAncestor(element, isReply, body));
    const neverTheArticle = isDialog(element) || (replyOrFooter && !headlined());
    const holdsArticle = !neverTheArticle && (share > WRAPPER_SHARE_OF_PROSE || (share > HEADLINED_SHARE_OF_PROSE && headlined()));
    if (!holdsArticle) element.remove();
  }
  if (!options.keepAllArticles) removeTeaserArticles(document);
}

/** The teaser step of removeBoilerplateElements on its own, for a page pre-cleaned with every article kept. */
export function removeTeaserArticles(document: DomDocument): void {
  if (document.body) for (const teaser of teaserArticles(document.body)) teaser.remove();
}

/**
 * The elements inside code blocks and code spans. A highlighter names its tokens by what they are in
 * the code ("hljs-comment", Prism's "token comment", "tag", "meta"), not by what they are on the
 * page: a code sample's comments are part of it.
 */
function codeTokens(body: DomElement): Set<DomElement> {
  const tokens = new Set<DomElement>();
  for (const code of body.querySelectorAll('pre, code')) for (const token of code.querySelectorAll('*')) tokens.add(token);
  return tokens;
}

const MICROFORMAT_ENTRY = /(?:^|\s)h-?entry(?:\s|$)/;
/**
 * Narrower than the page types' ARTICLE_SCHEMA_TYPES on purpose: a Review item inside a page is
 * most often a customer's, which stays boilerplate on a product page.
 */
const SCHEMA_ARTICLE_TYPE = /(?:Article|BlogPosting)$/;

/**
 * The post itself, as the page's markup declares it: a microformats entry (hAtom's "hentry",
 * microformats2's "h-entry"), a schema.org article or its body in microdata. Its class words are
 * not what it is. Themes put the post's taxonomy beside "hentry" ("hentry post author-jane"), which
 * read as a byline's words; a share plugin gave an article body's wrapper the id of its buttons'
 * container ("share-btns-container"). With comments outweighing the post, either took the
 * whole post away.
 */
function isDeclaredPost(element: DomElement): boolean {
  return (
    MICROFORMAT_ENTRY.test(element.className) ||
    element.getAttribute('itemprop') === 'articleBody' ||
    SCHEMA_ARTICLE_TYPE.test(element.getAttribute('itemtype') ?? '')
  );
}

/** Blocks that hold running text. */
const SENTENCE_HOLDERS = new Set(['P', 'LI', 'DD', 'BLOCKQUOTE', 'TD']);
/**
 * Characters of the paragraph's own text around an inline element (a link, a stressed word), at
 * least this many: the element is part of a sentence. Sites link names in their stories to tag pages
 * (<a id="auto-tag_nfl">NFL</a>), and class words such as "tag" or "share" then took the words out
 * of the sentence ("protesting during the ."). 80 characters is a prose run in page-type detection.
 */
const MIN_SENTENCE_TEXT_AROUND = 80;

/** Words of text a reader never sees on the screen, in a sentence or not: screen-reader and print-only text. */
const UNSHOWN_WORDS = new Set(['hidden', 'sr', 'sronly', 'visuallyhidden', 'print', 'screenreader', 'clipped', 'offscreen']);

function isPartOfASentence(element: DomElement): boolean {
  const holder = element.parentElement;
  if (!INLINE_ELEMENTS.has(element.nodeName) || !holder || !SENTENCE_HOLDERS.has(holder.nodeName)) return false;
  let around = 0;
  for (let child = holder.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === TEXT_NODE) around += normalizedLength(child.textContent);
  }
  return around >= MIN_SENTENCE_TEXT_AROUND;
}

/** Boilerplate words of the readers' replies under a page: comments, a reply form, a comment service. */
const REPLY_WORDS = new Set(['comment', 'respond', 'disqus']);

/** Boilerplate words that name what a block is, however much of the page such blocks hold. */
const NEVER_LAYOUT_WORDS = new Set([
  'comment', 'disqus', 'respond', 'sidebar', 'cookie', 'consent', 'newsletter', 'subscri', 'signup', 'paywall', 'modal', 'popup',
  'outbrain', 'taboola', 'advert', 'sponsor',
]);

/** The prose of the elements, each counted once: an element inside another of them adds nothing. */
function outermostProse(elements: DomElement[], prose: Map<DomElement, number>): number {
  const chosen = new Set(elements);
  let total = 0;
  for (const element of elements) {
    if (!hasAncestor(element, (ancestor) => chosen.has(ancestor))) total += prose.get(element) ?? 0;
  }
  return total;
}

/**
 * Article pages list teasers of other posts, and sometimes comments, as <article> elements too. When
 * the page has several outermost articles and exactly one holds the headline (<h1>), the others are
 * not this page's article.
 */
function teaserArticles(body: DomElement): DomElement[] {
  const outermost = [...body.querySelectorAll('article')].filter((article) => article.parentElement?.closest('article') == null);
  if (outermost.length < 2) return [];
  const headlined = outermost.filter((article) => article.querySelector('h1') !== null);
  return headlined.length === 1 ? outermost.filter((article) => article !== headlined[0]) : [];
}

// ---------------------------------------------------------------------------------------------
// Pruning the content Readability chose

const BLOCK_TAGS = new Set([
  'P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'LI', 'DD', 'DT', 'BLOCKQUOTE', 'PRE', 'DIV', 'SECTION', 'ARTICLE',
  'TABLE', 'TR', 'TD', 'TH', 'UL', 'OL', 'DL', 'FIGURE', 'HEADER', 'CENTER',
]);
const HEADING_TAGS = new Set(['H1', 'H2', 'H3', 'H4', 'H5', 'H6']);

/**
 * Word-like tokens, in any script. Chinese, Japanese and Korean write no spaces between words, so
 * each of their characters counts as one (as the benchmark's scorer counts them): a paragraph of
 * Chinese prose must not read as a two-word label.
 */
const WORD = new RegExp(`${CJK_CHARACTER}|[\\p{L}\\p{N}]+`, 'gu');
/** A block of at least this many words is prose: the article proper has begun. */
const MIN_PROSE_WORDS = 20;
/**
 * A block that is mostly a link to elsewhere on the same site is a teaser ("Related: …", "Subscribe
 * to our newsletter"); one that links off-site is a citation or a source, which belongs to the text.
 */
const LINK_BLOCK_SHARE = 0.75;

export function words(text: string): string[] {
  return text.toLowerCase().match(WORD) ?? [];
}

interface Block {
  element: DomElement;
  text: string;
  wordCount: number;
  /** Share of the block's characters that are link text. */
  linkShare: number;
  /** Every link in the block stays on the page's own site. */
  linksStayOnSite: boolean;
  linkCount: number;
}

/** The host a link leads to, without "www."; null when it cannot be resolved. */
function resolvedHost(href: string, base: string): string | null {
  try {
    return new URL(href, base).hostname.replace(/^www\./, '');
  } catch {
    return null;
  }
}

/** Blocks with no block inside them, in document order: the units of text the reader sees. */
function leafBlocks(content: DomElement, pageUrl: string): Block[] {
  const pageHost = resolvedHost(pageUrl, pageUrl);
  const blocks: Block[] = [];
  for (const element of content.querySelectorAll('*')) {
    if (!BLOCK_TAGS.has(element.nodeName)) continue;
    if ([...element.children].some((child) => BLOCK_TAGS.has(child.nodeName))) continue;
    const text = normalizeSpace(element.textContent);
    if (!text) continue;
    let linkText = 0;
    let linksStayOnSite = true;
    const links = element.querySelectorAll('a');
    for (const link of links) {
      linkText += normalizedLength(link.textContent);
      if (resolvedHost(link.getAttribute('href') ?? '', pageUrl) !== pageHost) linksStayOnSite = false;
    }
    const linkShare = Math.min(1, linkText / text.length);
    blocks.push({ element, text, wordCount: words(text).length, linkShare, linksStayOnSite, linkCount: links.length });
  }
  return blocks;
}

/**
 * A table with header cells holds data, and its cells are links when its data are names (a list of
 * winners, of releases): kept, whole or cell by cell, however much of it is link text. A table
 * without header cells is as often a layout of menus, and its link cells still go.
 */
function isInDataTable(element: DomElement): boolean {
  if (element.nodeName !== 'TABLE' && element.nodeName !== 'TD' && element.nodeName !== 'TH') return false;
  const table = element.closest('table');
  return table !== null && table.querySelector('th') !== null;
}

/** "Updated 10:01 pm PST, Tuesday", "05/10/2018", "Nov. 20, 2019": the block states when, not what. */
export const DATE_OR_TIME =
  /\b\d{1,2}[:h]\d{2}\b|\b\d{1,4}[./-]\d{1,2}[./-]\d{1,4}\b|\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|\b\d{1,2}\.?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b/i;
/** "By Jane Doe", "Por Fulano", "Von Max Mustermann": the block names who wrote the article. */
const BYLINE = /^(?:[Bb]y|BY|[Pp]or|[Vv]on|[Pp]ar|[Dd]i|[Dd]oor|[Aa]v|[Aa]f)\s+\p{Lu}/u;
/** Datelines are labels, not sentences: a short lede ("On May 5, the council voted.") ends like one. */
const ENDS_LIKE_A_SENTENCE = /[.!?…。！？]["'”’)」』）]?$/;
const MAX_LABEL_WORDS = 15;

/**
 * A label that only dates the article. A byline stays, with the date it carries ("By Jane Doe,
 * March 3"): where the page prints it in the article's block, as the opening line of the story, most
 * truths keep it (extraction-dev, issue 22: tune 5 pages up, none down; report 3 up, none down;
 * Zyte's 54 articles unchanged). A bare dateline goes: kept too, it cost Zyte's articles 0.003.
 */
function isDateline(block: Block): boolean {
  if (block.wordCount > MAX_LABEL_WORDS || ENDS_LIKE_A_SENTENCE.test(block.text)) return false;
  return DATE_OR_TIME.test(block.text) && !BYLINE.test(block.text);
}

/** The label publishers print over an ad slot, in the languages it is most often seen in. */
const AD_LABEL = /^(advertisement|advertising|advert|ads?|sponsored|anzeige|werbung|publicidad|publicité|pubblicità|reklama|annonce)$/i;
const COPYRIGHT = /^(copyright\b|©|ⓒ|\(c\)\s*\d{4})/i;

/** Most of the block's words appear in the title: it is the headline repeated. */
function repeatsTitle(block: Block, titleWords: Set<string>): boolean {
  if (titleWords.size === 0) return false;
  const blockWords = words(block.text);
  if (blockWords.length === 0) return false;
  const shared = blockWords.filter((word) => titleWords.has(word)).length;
  return shared / blockWords.length >= 0.8 && shared / titleWords.size >= 0.5;
}

/**
 * Prunes the content element Readability chose, in place. Removes link blocks that are teasers or
 * menus, the preamble before the first paragraph of prose when it only repeats the headline or gives
 * a date, headings left dangling at the end, advertisement labels and copyright lines.
 */
export interface PruneOptions {
  /**
   * Keep the blocks before the first paragraph of prose: on a thread they are the first post's
   * author and date, on a product page its name.
   */
  keepPreamble?: boolean;
}

export function pruneExtractedContent(content: DomElement, title: string | null, pageUrl: string, options: PruneOptions = {}): void {
  const blocks = leafBlocks(content, pageUrl);
  const titleWords = new Set(words(title ?? ''));
  const removed = new Set<Block>();

  for (const block of blocks) {
    const isLinkBlock = block.linkShare >= LINK_BLOCK_SHARE;
    // A heading that is a link announces another page wherever it leads; a row of links is a menu
    // or a share bar.
    const isTeaserOrMenu = block.linksStayOnSite || HEADING_TAGS.has(block.element.nodeName) || block.linkCount >= 3;
    if (isLinkBlock && isTeaserOrMenu && !isInDataTable(block.element)) removed.add(block);
  }
  for (const block of options.keepPreamble ? [] : blocks) {
    if (removed.has(block)) continue;
    if (block.wordCount >= MIN_PROSE_WORDS) break;
    if (repeatsTitle(block, titleWords) || isDateline(block)) removed.add(block);
  }
  for (let index = blocks.length - 1; index >= 0; index -= 1) {
    const block = blocks[index]!;
    if (removed.has(block)) continue;
    if (!HEADING_TAGS.has(block.element.nodeName)) break;
    removed.add(block);
  }
  for (const block of blocks) {
    if (AD_LABEL.test(block.text) || (block.wordCount <= MAX_LABEL_WORDS * 2 && COPYRIGHT.test(block.text))) removed.add(block);
  }
  for (const block of removed) block.element.remove();
}

/**
 * The heading a blog or news site puts over its comments: "Comments", "12 Comments", "Leave a Reply",
 * "Reader comments (4)". Not "Comment" alone, "Discussion" or "Responses", which head sections of
 * articles, papers and reports.
 */
const COMMENTS_HEADING = /^(?:(?:\d+\s+)?(?:reader\s+|user\s+)?comments|\d+\s+comment|leave\s+a\s+(?:reply|comment)|post\s+a\s+comment|add\s+a\s+comment|join\s+the\s+(?:discussion|conversation))(?:\s*\(\d+\))?\s*:?$/i;
/**
 * Prose before the heading: the article itself has been read by then. A shorter post is cut too when
 * what follows the heading is no longer than the post; a heading near the top with the article after
 * it is not.
 */
const MIN_TEXT_BEFORE_COMMENTS = 500;

/**
 * Ends the content at a comments heading: the heading and everything after it go. Comments that
 * carry no comment markup (a plain "post" block under an <h3>COMMENTS</h3>) get past the class and
 * id rules, and Readability takes them in with the article they follow.
 */
export function cutAtCommentsHeading(content: DomElement): void {
  const heading = [...content.querySelectorAll('h1, h2, h3, h4, h5, h6')].find((element) => COMMENTS_HEADING.test(normalizeSpace(element.textContent)));
  if (!heading) return;
  const before = textBefore(content, heading);
  if (before < MIN_TEXT_BEFORE_COMMENTS && (before === 0 || normalizedLength(content.textContent) - before > before)) return;
  for (let node: DomElement = heading; node !== content && node.parentElement; node = node.parentElement) {
    while (node.nextSibling) node.nextSibling.remove();
  }
  heading.remove();
}

/**
 * The heading or label over a list of the site's other posts: "Related posts", "More stories",
 * "Recent Posts", "Latest news", "Other news:", a forum's "Similar threads" and "Related
 * questions". Readability and the region keep such a list when it sits inside the post's own block
 * (a related-posts plugin writes it into the entry), and no truth of extraction-dev keeps it.
 * Phrases that may head a post's own part ("Read next", "Further reading", "You may also like",
 * "Related videos") are not among them: such a section is the page's own text as often as not.
 */
const OTHER_POSTS_PHRASE =
  '(?:related|similar|more|other|recent|popular|latest)\\s+(?:posts?|articles?|stories|entries|links|reads|news|content|threads?|questions?|topics?|discussions?)';
const OTHER_POSTS_HEADING = new RegExp(`^${OTHER_POSTS_PHRASE}\\s*:?$`, 'i');
/** The phrase anywhere in a text: a content whose text lacks it has no such heading to look for. */
export const OTHER_POSTS_WORDS = new RegExp(`\\b${OTHER_POSTS_PHRASE}\\b`, 'i');
/**
 * Of those, the words that also name a site's own index: the items of a "Latest news" page or of
 * a front page's "Recent posts" are that listing's content. Their list goes only where more of the
 * content stands before it than in it, as a site's widget under a post does. Any other list that
 * outweighs the content before it goes only when it reads as a list of posts (its blocks mostly
 * linked titles): a short post's related list can be longer than the post, but a heading that opens
 * the rest of an article's prose heads no such list.
 */
const SITE_INDEX_HEADING = /^(?:recent|popular|latest)\b/i;
/** The words that relate the list to one post: no listing's own items are so headed. */
const RELATED_HEADING = /^(?:related|similar)\b/i;
/** A heading, or a label written as a paragraph, a box or bold text ("<p><strong>Related posts</strong>:</p>"). */
const SECTION_LABELS = 'h1, h2, h3, h4, h5, h6, [role="heading"], p, div, span, strong, b, dt';
const MAX_SECTION_LABEL_LENGTH = 40;
/** A block after a label belongs to the label's list while at least this share of its text is link text. */
const MIN_LINK_SHARE_OF_LISTED_BLOCK = 0.5;

/**
 * Removes the lists of the site's other posts that a heading or label announces (see
 * OTHER_POSTS_HEADING), after the content they follow; says whether it removed any. The list is
 * the element the heading opens (a widget, a "related" box), or, where the markup is flat, the
 * heading and its next siblings: up to the next heading of its level, or, after a label, the blocks
 * of links that follow it. With relatedOnly, only the lists headed as related (RELATED_HEADING).
 */
export function removeOtherPostSections(content: DomElement, { relatedOnly = false } = {}): boolean {
  let removed = false;
  for (const label of shortElements(content, SECTION_LABELS, MAX_SECTION_LABEL_LENGTH)) {
    if (!content.contains(label)) continue;
    const text = normalizeSpace(label.textContent);
    // A link so named is a menu's entry ("Latest News" in a site's navigation), not a heading.
    if (!OTHER_POSTS_HEADING.test(text) || label.closest('a') !== null || label.querySelector('a') !== null) continue;
    if (relatedOnly && !RELATED_HEADING.test(text)) continue;
    const section = sectionOpenedBy(outermostWithSameText(label, content), content);
    const before = textBefore(content, section[0]!);
    if (before === 0) continue;
    // A list that outweighs what comes before it must read as one: a site index's, or prose.
    const sectionText = section.reduce((sum, block) => sum + normalizedLength(block.textContent), 0);
    if (before < sectionText && (SITE_INDEX_HEADING.test(text) || !section.every(isLabelOrLinks))) continue;
    for (const block of section) block.remove();
    removed = true;
  }
  return removed;
}

function outermostWithSameText(element: DomElement, root: DomElement): DomElement {
  const length = normalizedLength(element.textContent);
  let outermost = element;
  while (outermost.parentElement && outermost.parentElement !== root && normalizedLength(outermost.parentElement.textContent) === length) outermost = outermost.parentElement;
  return outermost;
}

/**
 * The blocks a heading opens: its parent, when the heading is the first text there, else the heading
 * and the siblings after it that belong to it.
 */
function sectionOpenedBy(head: DomElement, root: DomElement): DomElement[] {
  const parent = head.parentElement;
  if (parent && parent !== root && textBefore(parent, head) === 0) return [parent];
  if (HEADING_TAGS.has(head.nodeName) || head.getAttribute('role') === 'heading') return sectionBlocks(head, head.nodeName);
  const blocks = [head];
  for (let next = head.nextElementSibling; next && isLinkBlock(next); next = next.nextElementSibling) blocks.push(next);
  return blocks;
}

/**
 * A flat section: `first` (a heading, or the element holding it) and its next siblings, up to one
 * that is or holds a heading of the same level (`level`, a tag name).
 */
export function sectionBlocks(first: DomElement, level: string): DomElement[] {
  const blocks = [first];
  for (let next = first.nextElementSibling; next && next.nodeName !== level && next.querySelector(level) === null; next = next.nextElementSibling) blocks.push(next);
  return blocks;
}

/** A block of a list of posts: its heading, or mostly the posts' linked titles. */
function isLabelOrLinks(element: DomElement): boolean {
  return normalizedLength(element.textContent) <= MAX_SECTION_LABEL_LENGTH || isLinkBlock(element);
}

function isLinkBlock(element: DomElement): boolean {
  const text = normalizedLength(element.textContent);
  if (text === 0) return false;
  let linkText = 0;
  for (const link of element.querySelectorAll('a')) linkText += normalizedLength(link.textContent);
  return linkText >= text * MIN_LINK_SHARE_OF_LISTED_BLOCK;
}

/** Characters of text in the content before the element, in document order. */
function textBefore(content: DomElement, element: DomElement): number {
  let total = 0;
  for (let node: DomElement = element; node !== content && node.parentElement; node = node.parentElement) {
    for (let sibling: DomNode | null = node.previousSibling; sibling; sibling = sibling.previousSibling) total += normalizedLength(sibling.textContent);
  }
  return total;
}

/**
 * What a blog theme prints around its comments even when there are none: WordPress's "No comments
 * yet", "RSS feed for comments on this post", "TrackBack URI" and the postmetadata sentence "You can
 * follow any responses to this entry through the RSS 2.0 feed…". It is the comment section's, and the
 * comments stay out; short posts kept it, as it sits outside any heading that cutAtCommentsHeading
 * could cut at.
 */
const COMMENT_CHROME = /^(?:no comments yet|there are no comments yet|be the first to comment|comments are closed|(?:rss|atom) feed for comments on this (?:post|entry)|trackback(?: ur[il])?(?: for this entry)?|you can follow any responses to this entry through the rss 2\.0 feed\b.*)[.:]?$/i;
const MAX_COMMENT_CHROME_LENGTH = 200;

/** Removes the content's elements whose whole text is comment-section chrome. */
export function removeCommentChrome(content: DomElement): void {
  removeElementsByWholeText(content, 'p, div, span, li, a, small, em, h2, h3, h4', COMMENT_CHROME, MAX_COMMENT_CHROME_LENGTH);
}

/**
 * A call to action as an element's whole text: "Learn more", "Read full article", "View details",
 * "Add to cart", "Quick view", "Skip to product list", "Loading…". It leads elsewhere or does
 * something; it is never the page's text.
 */
const CALL_TO_ACTION = new RegExp(
  '^(?:(?:learn|read|see|show|view|load|find out) more|read (?:the )?full (?:article|story|review|post)|continue reading|keep reading|' +
    '(?:see|view) (?:all )?details|more options|(?:choose|select) options|compare|quick (?:view|shop|look)|add to (?:cart|bag|basket|wishlist|compare)|buy now|shop now|order now|' +
    'skip (?:this section|listing|to (?:product list|content|main content|results))|loading\\.*|back to top)[.…:]?\\s*[›»>→]?$',
  'i',
);
const MAX_CALL_TO_ACTION_LENGTH = 40;
/** A form's labels too: a product card's "Compare" checkbox, its variants' "More options" legend. */
const CALL_TO_ACTION_HOLDERS = 'a, button, span, li, div, p, strong, em, b, label, legend';

/** Removes the elements of the content whose whole text is a call to action. */
export function removeCallsToAction(content: DomElement): void {
  removeElementsByWholeText(content, CALL_TO_ACTION_HOLDERS, CALL_TO_ACTION, MAX_CALL_TO_ACTION_LENGTH);
}

/**
 * A heading's permalink: Sphinx's and MkDocs' `¶`, rustdoc's `§`, the `#` or link symbol of other
 * documentation generators. A link to a fragment whose whole text is one such mark is a hover
 * control beside the heading, and read as text it sticks to the heading's last word ("Variants§").
 */
const PERMALINK_MARK = /^[¶§#🔗⚓]\uFE0F?$/u;

/** Removes the content's heading permalinks. */
export function removeHeadingPermalinks(content: DomElement): void {
  removeElementsByWholeText(content, 'a[href*="#"]', PERMALINK_MARK, 2);
}

/**
 * Elements whose text a reader never sees: code and style sheets, what a browser shows only without
 * scripts (a page whose <noscript> holds its content has had it revealed before this), and the
 * fallback shown only when a video or sound cannot play, a canvas cannot draw or a frame cannot load
 * ("Your browser does not support the video tag"). Bare tag names, which the DOM matches fastest.
 */
export const UNSHOWN_TAGS: readonly string[] = ['script', 'style', 'template', 'noscript', 'video', 'audio', 'canvas', 'iframe'];
const UNSHOWN_ELEMENTS = UNSHOWN_TAGS.join(', ');
/** An SVG icon's title and description: a tooltip and a screen reader's words ("arrow-up", "Uber logo"). */
const SVG_LABELS = 'title, desc';

/**
 * Removes what the content holds but never shows, so that neither the text nor the markdown carries
 * it, and what measures the content's text counts only what a reader gets: a carousel card's <style>
 * made its list item look like one with text. An SVG's drawn <text> stays.
 */
export function removeUnshownElements(content: DomElement): void {
  for (const element of [...content.querySelectorAll(UNSHOWN_ELEMENTS)]) element.remove();
  for (const svg of content.querySelectorAll('svg')) {
    for (const label of [...svg.querySelectorAll(SVG_LABELS)]) label.remove();
  }
}

/**
 * A list item without text (a picture, an icon, a colour swatch) reads as a bullet with nothing after
 * it, in the text and in markdown; so does an item that opens with a block without text (a card's
 * picture above its name), whose text then starts on the next line. Both are taken out.
 */
export function tidyListItems(content: DomElement): void {
  for (const item of [...content.querySelectorAll('li')]) {
    if (normalizeSpace(item.textContent) === '') {
      item.remove();
      continue;
    }
    for (let node = item.firstChild; node && normalizeSpace(node.textContent) === ''; ) {
      const next = node.nextSibling;
      if (node.nodeType === ELEMENT_NODE) node.remove();
      node = next;
    }
  }
}

/** A block's text this long, repeated word for word, is the same block shown twice. */
const MIN_REPEATED_BLOCK = 100;

/**
 * Removes blocks whose whole text repeats an earlier block's word for word. Shops and product pages
 * render a section once per screen size or carousel slide and hide all but one with CSS; a reader
 * sees it once. Whole blocks, not lines: the plans of a pricing table list the same features, each
 * under its own price, and all of them stay (a product's shorter repeats go in removeRepeatedLines,
 * which spares such plans).
 */
export function removeRepeatedBlocks(content: DomElement): void {
  // Reading every block's text is quadratic in the page's depth; only blocks of equal measured length
  // can repeat each other, and those are few.
  const measures = measureText(content);
  const byLength = new Map<number, DomElement[]>();
  for (const [element, measure] of measures) {
    if (measure.text < MIN_REPEATED_BLOCK || !BLOCK_TAGS.has(element.nodeName)) continue;
    const sameLength = byLength.get(measure.text);
    if (sameLength) sameLength.push(element);
    else byLength.set(measure.text, [element]);
  }
  const removed = new Set<DomElement>();
  for (const sameLength of byLength.values()) {
    if (sameLength.length < 2) continue;
    const seen = new Map<string, DomElement>();
    // measureText lists elements in document order, each after its descendants.
    for (const element of sameLength) {
      if (hasAncestorIn(element, removed)) continue;
      const text = normalizeSpace(element.textContent);
      const first = seen.get(text);
      // A wrapper and its only child have the same text; that is one block, not two.
      if (!first) seen.set(text, element);
      else if (!first.contains(element) && !element.contains(first)) removed.add(element);
    }
  }
  for (const element of removed) element.remove();
}

/**
 * Removes the lines of a product's content whose words repeat an earlier line's. A shop prints the
 * product's name, price and option labels more than once (a sticky purchase bar, a gallery caption,
 * the copy laid out for phones) in blocks too short for removeRepeatedBlocks; a reader takes them in
 * once. A line is what the text shows as one: the inline run of a block between its inner blocks and
 * line breaks, or a whole table row. Code and a table's header rows stay. So does a line repeated in
 * parallel blocks, siblings of one kind (the plans of a pricing table, a size chart per unit): each
 * says it of its own block, and without it a plan would read as lacking the feature.
 *
 * On extraction-dev (issue 22), product pages: tune half 26 up, 7 down (product 0.7071 → 0.7098),
 * report half 19 up, 4 down (0.6669 → 0.6706). Without the parallel blocks' exemption the tune half
 * gained more (0.7146) and the report half less (0.6691); with list items exempted too, less on both.
 */
export function removeRepeatedLines(content: DomElement): void {
  const holdsLines = elementsHoldingLines(content);
  const parallelBlocks = new ParallelBlocks();
  /** Each line's words, and the element its first occurrence sits in. */
  const firstSeen = new Map<string, DomElement>();
  const dropIfRepeated = (nodes: DomNode[], within: DomElement, keep: boolean): boolean => {
    const key = words(textNodesOf(nodes).join(' ')).join(' ');
    if (!key) return false;
    const first = firstSeen.get(key);
    if (!first) {
      firstSeen.set(key, within);
      return false;
    }
    if (keep || inParallelBlocks(first, within, content, parallelBlocks)) return false;
    for (const node of nodes) node.remove();
    return true;
  };
  // parseDocument caps the nesting (MAX_ELEMENT_DEPTH), so this recursion stays shallow.
  const visit = (block: DomElement): void => {
    let run: DomNode[] = [];
    const endLine = (): boolean => {
      const dropped = run.length > 0 && dropIfRepeated(run, block, false);
      run = [];
      return dropped;
    };
    for (const child of [...block.childNodes]) {
      if (child.nodeType === ELEMENT_NODE) {
        const element = child as DomElement;
        if (element.nodeName === 'BR') {
          // The break that ended a dropped line would leave an empty one.
          if (endLine()) element.remove();
          continue;
        }
        if (element.nodeName === 'PRE') {
          endLine();
          continue;
        }
        if (element.nodeName === 'TR') {
          endLine();
          dropIfRepeated([element], element, element.querySelector('th') !== null);
          continue;
        }
        if (BLOCK_TAGS.has(element.nodeName) || holdsLines.has(element)) {
          endLine();
          visit(element);
          continue;
        }
      }
      run.push(child);
    }
    endLine();
  };
  visit(content);
}

/** The elements of the content with a block or a line break inside them, found in one pass from the leaves up. */
function elementsHoldingLines(content: DomElement): Set<DomElement> {
  const holding = new Set<DomElement>();
  const elements = [...content.querySelectorAll('*')];
  // In reverse document order every element comes after its descendants.
  for (let index = elements.length - 1; index >= 0; index--) {
    const element = elements[index]!;
    const breaks = BLOCK_TAGS.has(element.nodeName) || element.nodeName === 'BR' || holding.has(element);
    if (breaks && element.parentElement) holding.add(element.parentElement);
  }
  return holding;
}

/**
 * Which elements have a sibling of their kind (blockSignature). Asked only where a line repeats, so
 * each parent's children are read once, when first asked about.
 */
class ParallelBlocks {
  private readonly kindCounts = new Map<DomElement, Map<string, number>>();

  /** The element's kind when a sibling shares it, else null. */
  kindOf(element: DomElement): string | null {
    const parent = element.parentElement;
    if (!parent) return null;
    let counts = this.kindCounts.get(parent);
    if (!counts) {
      counts = new Map();
      for (const child of parent.children) {
        const kind = blockSignature(child);
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
      }
      this.kindCounts.set(parent, counts);
    }
    const kind = blockSignature(element);
    return counts.get(kind)! > 1 ? kind : null;
  }
}

/**
 * How far above a line its parallel block is looked for: a plan's feature sits a few levels inside it;
 * farther up, siblings of one kind are the page's own sections (without the limit, one report page
 * fewer gained).
 */
const MAX_PARALLEL_BLOCK_DEPTH = 16;

/** Whether two lines sit in different siblings of one kind, each in its own (or are such siblings themselves). */
function inParallelBlocks(first: DomElement, second: DomElement, content: DomElement, blocks: ParallelBlocks): boolean {
  const blocksOfFirst = new Map<DomElement | null, { block: DomElement; kind: string }>();
  for (const element of nearAncestors(first, content)) {
    const kind = blocks.kindOf(element);
    if (kind) blocksOfFirst.set(element.parentElement, { block: element, kind });
  }
  for (const element of nearAncestors(second, content)) {
    const sibling = blocksOfFirst.get(element.parentElement);
    if (sibling && sibling.block !== element && sibling.kind === blocks.kindOf(element)) return true;
  }
  return false;
}

/** The element and its ancestors below the content, up to MAX_PARALLEL_BLOCK_DEPTH of them. */
function* nearAncestors(element: DomElement, content: DomElement): Generator<DomElement> {
  let current: DomElement | null = element;
  for (let level = 0; current && current !== content && level < MAX_PARALLEL_BLOCK_DEPTH; level++) {
    yield current;
    current = current.parentElement;
  }
}

/** The texts of the nodes' text nodes, in order: words that markup separates stay apart. */
function textNodesOf(nodes: DomNode[]): string[] {
  const texts: string[] = [];
  const collect = (node: DomNode): void => {
    if (node.nodeType === TEXT_NODE) texts.push(node.textContent ?? '');
    else if (node.nodeType === ELEMENT_NODE) for (let child = node.firstChild; child; child = child.nextSibling) collect(child);
  };
  for (const node of nodes) collect(node);
  return texts;
}

function hasAncestorIn(element: DomElement, elements: Set<DomElement>): boolean {
  return hasAncestor(element, (ancestor) => elements.has(ancestor));
}
