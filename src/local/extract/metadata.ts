/**
 * Page metadata: title, publication date, language, canonical URL and the page's description.
 *
 * Sources are tried in order of trust. Structured data written for machines (JSON-LD, then meta tags
 * and microdata) is the most reliable because publishers feed it to search engines; a <time> element
 * is visible markup that can belong to a sidebar; a date in the URL is a last resort and only ever
 * accepted with a day, since a month-only date would be wrong by up to 30 days.
 */
import { utcMilliseconds } from '../../util/dates.js';
import { httpAddress } from '../fetch/url.js';
import type { PageType } from '../types.js';
import { words } from './boilerplate.js';
import { normalizeSpace, textOfMarkupString, type DomDocument, type DomElement } from './dom.js';
import { detectLanguageFromScript } from './language.js';
import { pageEntities, readJsonLdScripts, schemaTypes, type JsonObject } from './json-ld.js';
import { PageElements } from './page-elements.js';

export interface PageMetadata {
  title: string | null;
  author: string | null;
  datePublished: string | null;
  language: string | null;
  canonicalUrl: string | null;
  /** The summary the page gives link previews and search engines (og:description, then twitter:, then description). */
  description: string | null;
}

/** schema.org types whose headline and dates describe the page's own article. */
const ARTICLE_TYPE = /(Article|Posting|^Report|^APIReference|^Review|^Recipe|^HowTo)$/;
/** Types that describe the page as a whole: used when no article-like object exists. */
const PAGE_TYPE = /(Page|^VideoObject|^Event)$/;

const EARLIEST_PLAUSIBLE_DATE = Date.UTC(1990, 0, 1);
/** Allows for publishers whose clocks or time zones put "today" slightly ahead of ours. */
const FUTURE_TOLERANCE_MS = 2 * 24 * 3600 * 1000;

/** `pageType`, when known, tells a shop's pages, whose <title> is written for search engines. */
export function extractMetadata(
  document: DomDocument,
  pageUrl: string,
  jsonLdScripts = readJsonLdScripts(document),
  pageType: PageType | null = null,
  elements = new PageElements(document),
): PageMetadata {
  const jsonLd = readJsonLd(jsonLdScripts);
  const meta = new MetaTags(elements);
  return {
    title: findTitle(document, elements, jsonLd, meta, pageUrl, pageType),
    author: findAuthor(document, elements, jsonLd, meta),
    datePublished: findDatePublished(elements, jsonLd, meta, pageUrl),
    language: findLanguage(document, jsonLd, meta),
    canonicalUrl: findCanonicalUrl(elements, pageUrl),
    description: meta.content(DESCRIPTION),
  };
}

// ---------------------------------------------------------------------------------------------
// Meta tags

const META_ATTRIBUTES = ['name', 'property', 'itemprop', 'http-equiv'] as const;
/** A meta tag by its naming attribute and value, matched without regard to case. */
type MetaName = readonly [(typeof META_ATTRIBUTES)[number], string];

/**
 * The page's <meta> elements by naming attribute and lower-case value, in document order, read in
 * one pass. A selector per name walked the whole tree for each of some thirty names, a tenth of a
 * page's extraction time.
 */
class MetaTags {
  private readonly byName = new Map<string, DomElement[]>();
  /** Every element with an itemprop (meta tags included), by its lower-case value, in document order. */
  private readonly byItemprop = new Map<string, DomElement[]>();

  constructor(elements: PageElements) {
    for (const element of elements.matching('meta, [itemprop]')) {
      const itemprop = element.getAttribute('itemprop');
      if (itemprop !== null) pushTo(this.byItemprop, itemprop.toLowerCase(), element);
      if (element.localName !== 'meta') continue;
      for (const attribute of META_ATTRIBUTES) {
        const value = element.getAttribute(attribute);
        if (value !== null) pushTo(this.byName, `${attribute}=${value.toLowerCase()}`, element);
      }
    }
  }

  /** Elements whose itemprop is `name` (as `[itemprop="name" i]` matches), in document order. */
  itemprop(name: string): readonly DomElement[] {
    return this.byItemprop.get(name.toLowerCase()) ?? [];
  }

  elements([attribute, value]: MetaName): readonly DomElement[] {
    return this.byName.get(`${attribute}=${value.toLowerCase()}`) ?? [];
  }

  /** The first non-empty content of the names, tried in order. */
  content(names: readonly MetaName[]): string | null {
    for (const name of names) {
      const content = firstContentOf(this.elements(name));
      if (content) return content;
    }
    return null;
  }
}

function pushTo(map: Map<string, DomElement[]>, key: string, element: DomElement): void {
  const elements = map.get(key);
  if (elements) elements.push(element);
  else map.set(key, [element]);
}

/** The first non-empty content of the elements. */
function firstContentOf(elements: Iterable<DomElement>): string | null {
  for (const element of elements) {
    const content = contentOf(element);
    if (content) return content;
  }
  return null;
}

/** Inside an element whose itemprop is `name` (the descendant combinator of `[itemprop="author" i] [itemprop="name" i]`). */
function hasItempropAncestor(element: DomElement, name: string): boolean {
  for (let ancestor = element.parentElement; ancestor; ancestor = ancestor.parentElement) {
    if (ancestor.getAttribute('itemprop')?.toLowerCase() === name) return true;
  }
  return false;
}

function contentOf(element: DomElement): string {
  return normalizeSpace(element.getAttribute('content') ?? element.getAttribute('datetime') ?? element.textContent);
}

// ---------------------------------------------------------------------------------------------
// JSON-LD

interface JsonLdObjects {
  articles: JsonObject[];
  pages: JsonObject[];
}

function readJsonLd(scripts: unknown[]): JsonLdObjects {
  const found: JsonLdObjects = { articles: [], pages: [] };
  for (const object of pageEntities(scripts)) {
    const types = schemaTypes(object);
    if (types.some((type) => ARTICLE_TYPE.test(type))) found.articles.push(object);
    else if (types.some((type) => PAGE_TYPE.test(type))) found.pages.push(object);
  }
  return found;
}

function firstString(objects: JsonObject[], keys: string[]): string | null {
  for (const object of objects) {
    for (const key of keys) {
      const value = object[key];
      const text = typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : null;
      if (text && normalizeSpace(text)) return text;
    }
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Title and description

const DESCRIPTION: readonly MetaName[] = [['property', 'og:description'], ['name', 'twitter:description'], ['name', 'description']];

/**
 * The page's headline. Publishers fill each source with something else now and then: JSON-LD names
 * an embedded video, an event or a FAQ block, or holds a short description where the headline
 * belongs (Wikipedia); og:title is a site-wide slogan; <title> adds the site's name and section.
 * So the sources are weighed against one another and against the page's visible <h1>:
 * 1. a top heading that is one of the titles' parts ("Headlamps" in "Headlamps | Outdoor Shop") is
 *    the headline, as a reader sees it, without what surrounds it;
 * 2. otherwise the most trusted title that another kind of source backs, by sharing most of its words;
 * 3. otherwise, as before, the most trusted title there is.
 * On a shop's pages, a heading the title opens with is the title: the rest was written for search
 * engines ("Hiking Boots: Shop Boots for Hiking & Backpacking").
 */
function findTitle(document: DomDocument, elements: PageElements, jsonLd: JsonLdObjects, meta: MetaTags, pageUrl: string, pageType: PageType | null): string | null {
  const structured = firstString(jsonLd.articles, ['headline', 'name']) ?? firstString(jsonLd.pages, ['headline', 'name']);
  const candidates: TitleCandidate[] = [
    { source: 'structured', text: structured === null ? '' : decodedTitle(document, structured) },
    { source: 'social', text: decodedText(document, meta.content([['property', 'og:title'], ['name', 'og:title'], ['name', 'twitter:title']]) ?? '') },
    { source: 'document', text: decodedText(document, elements.named('title')[0]?.textContent ?? '') },
  ].filter((candidate): candidate is TitleCandidate => candidate.text !== '');
  const names = siteNames(jsonLd, meta);
  const headings = topHeadings(document, elements).filter((heading) => !isSiteName(heading, names, pageUrl));
  const named = headings.find((heading) => candidates.some((candidate) => namesHeading(candidate.text, heading)));
  if (named) return named;
  const backed = candidates.find(({ source, text }) =>
    [...candidates.filter((other) => other.source !== source).map((other) => other.text), ...headings].some((other) => sharesMostWords(text, other)),
  );
  const title = (backed ?? candidates[0])?.text || headings[0] || null;
  if (!title) return null;
  const headline = withoutSiteName(title, names);
  return SHOP_PAGE_TYPES.has(pageType) ? (headings.find((heading) => opensWith(headline, heading)) ?? headline) : headline;
}

/** A shop's category and product pages: their <title> is written for search engines, their <h1> names the thing. */
const SHOP_PAGE_TYPES: ReadonlySet<PageType | null> = new Set(['listing', 'product']);

/** "Hiking Boots: Shop Boots for Hiking & Backpacking" opens with the heading "Hiking Boots". */
function opensWith(title: string, heading: string): boolean {
  const headingWords = words(heading);
  const titleOpening = words(title);
  return headingWords.length > 0 && headingWords.length < titleOpening.length && headingWords.every((word, index) => titleOpening[index] === word);
}

interface TitleCandidate {
  source: 'structured' | 'social' | 'document';
  text: string;
}

/** Longer than this, an <h1> is a block of text marked up as a heading, not a headline. */
const MAX_HEADING_LENGTH = 200;
/** The top headings looked at: a page has one or two (a logo and the headline), a broken template a few more. */
const MAX_TOP_HEADINGS = 3;

function topHeadings(document: DomDocument, elements: PageElements): string[] {
  return elements
    .named('h1')
    .slice(0, MAX_TOP_HEADINGS)
    .map((heading) => decodedText(document, heading.textContent ?? ''))
    .filter((text) => text !== '' && text.length <= MAX_HEADING_LENGTH);
}

/** A JSON-LD string, which may hold markup: its text, decoded as HTML reads it (see decodedText). */
function decodedTitle(document: DomDocument, text: string): string {
  return decodedText(document, textOfMarkupString(document, text));
}

/**
 * Text the parser has decoded once (an attribute, an element's text, a JSON-LD string read as HTML):
 * an entity is left only where its publisher escaped it twice ("And finally&amp;#8230;" reads
 * "And finally&#8230;" once decoded), and is decoded again. What looks like a tag is the title's own
 * words by now ("<table>: The Table element"), and stays.
 */
function decodedText(document: DomDocument, text: string): string {
  const once = normalizeSpace(text);
  return ESCAPED_CHARACTER.test(once) ? normalizeSpace(textOfMarkupString(document, once.replace(/</g, '&lt;'))) : once;
}

const ESCAPED_CHARACTER = /&(?:#\d+|#x[\da-f]+|[a-z]+);/i;

/** "Headline | Section | Site" → its parts; the separators are set off by spaces, so "Wi-Fi" and "24/7" stay whole. */
const TITLE_SEPARATOR = / (?:[|\-–—·•»\/:]|::) /;

/**
 * The title is the heading, or one of its parts is. Not its last part after a longer first one: that
 * is where sites put their own or their section's name ("Defining Traits - The Rust Book", whose
 * <h1> is the book's title; "A long story : science", a forum's name).
 */
function namesHeading(title: string, heading: string): boolean {
  if (sameWords(title, heading)) return true;
  const parts = title.split(TITLE_SEPARATOR);
  if (parts.length < 2) return false;
  const last = parts.length - 1;
  return parts.some((part, index) => sameWords(part, heading) && (index < last || words(parts[0]!).length < words(part).length));
}

function sameWords(a: string, b: string): boolean {
  const wordsOfA = words(a);
  return wordsOfA.length > 0 && wordsOfA.join(' ') === words(b).join(' ');
}

/** At least half of the title's words are in the other text. */
function sharesMostWords(title: string, other: string): boolean {
  const titleWordSet = new Set(words(title));
  if (titleWordSet.size === 0) return false;
  const others = new Set(words(other));
  let shared = 0;
  for (const word of titleWordSet) if (others.has(word)) shared += 1;
  return shared / titleWordSet.size >= 0.5;
}

/** A heading that is the site's name (a logo in an <h1>): declared as the site's name, or its address's name. */
function isSiteName(heading: string, names: string[], pageUrl: string): boolean {
  if (names.some((name) => sameWords(name, heading))) return true;
  const hostLabels = words(httpAddress(pageUrl)?.hostname.replace(/^www\./, '') ?? '');
  const joined = words(heading).join('');
  return joined !== '' && (joined === hostLabels.join('') || hostLabels.slice(0, -1).includes(joined));
}

/** The site's own name, as the page declares it: to be told apart from the headline. */
function siteNames(jsonLd: JsonLdObjects, meta: MetaTags): string[] {
  const publisher = jsonLd.articles.map((article) => article.publisher).find((value): value is JsonObject => typeof value === 'object' && value !== null);
  return [
    meta.content([['property', 'og:site_name']]),
    meta.content([['name', 'application-name']]),
    typeof publisher?.name === 'string' ? normalizeSpace(publisher.name) : null,
  ].filter((name): name is string => Boolean(name));
}

/** "Headline | Site" → "Headline" when the site's name is declared; otherwise the title is left alone. */
function withoutSiteName(title: string, siteNames: string[]): string {
  for (const siteName of siteNames) {
    for (const separator of [' | ', ' - ', ' – ', ' — ', ' :: ', ' · ', ' » ']) {
      const suffix = `${separator}${siteName}`.toLowerCase();
      if (title.length > suffix.length && title.toLowerCase().endsWith(suffix)) return title.slice(0, -suffix.length).trim();
    }
  }
  return title;
}

// ---------------------------------------------------------------------------------------------
// Author

/** A schema.org author: a name, a Person or Organization object, or a list of either. */
function authorNames(value: unknown): string[] {
  if (typeof value === 'string') return [normalizeSpace(value)];
  if (Array.isArray(value)) return value.flatMap(authorNames);
  if (value !== null && typeof value === 'object' && typeof (value as JsonObject).name === 'string') {
    return [normalizeSpace((value as JsonObject).name as string)];
  }
  return [];
}

/** Longer than this, an "author" is a sentence or a list of credits, not a name. */
const MAX_AUTHOR_LENGTH = 100;

function findAuthor(document: DomDocument, elements: PageElements, jsonLd: JsonLdObjects, meta: MetaTags): string | null {
  const structured = jsonLd.articles.flatMap((article) => authorNames(article.author)).filter(Boolean);
  const author =
    (structured.length ? [...new Set(structured)].join(', ') : null) ??
    meta.content([['name', 'author'], ['property', 'article:author'], ['name', 'dc.creator']]) ??
    firstContentOf(meta.itemprop('name').filter((element) => hasItempropAncestor(element, 'author'))) ??
    firstContentOf(meta.itemprop('author')) ??
    firstContentOf(elements.namedMatching('a', 'a[rel="author" i]'));
  // article:author is often a profile URL rather than a name.
  if (!author || author.length > MAX_AUTHOR_LENGTH || /^https?:\/\//i.test(author)) return null;
  return textOfMarkupString(document, author);
}

// ---------------------------------------------------------------------------------------------
// Date published

const PUBLISHED_META_NAMES: readonly MetaName[] = [
  ['property', 'article:published_time'],
  ['name', 'article:published_time'],
  ['property', 'og:published_time'],
  ['property', 'og:article:published_time'],
  ['itemprop', 'datePublished'],
  ['name', 'parsely-pub-date'],
  ['name', 'sailthru.date'],
  ['name', 'pubdate'],
  ['name', 'publishdate'],
  ['name', 'publish-date'],
  ['name', 'publish_date'],
  ['name', 'date'],
  ['name', 'dc.date.issued'],
  ['name', 'dcterms.issued'],
  ['name', 'dc.date'],
  ['name', 'dcterms.created'],
  ['name', 'citation_publication_date'],
  ['name', 'citation_date'],
];
/** Microdata outside <meta>: <time itemprop=datePublished datetime=…>, or a content attribute. */
const PUBLISHED_MICRODATA_ATTRIBUTES = ['datetime', 'content'];

function findDatePublished(elements: PageElements, jsonLd: JsonLdObjects, meta: MetaTags, pageUrl: string): string | null {
  const structured =
    firstString(jsonLd.articles, ['datePublished', 'dateCreated']) ?? firstString(jsonLd.pages, ['datePublished', 'uploadDate', 'startDate']);
  return (
    parseDate(structured) ??
    firstParsableMetaDate(meta) ??
    dateFromTimeElements(elements) ??
    dateFromUrl(pageUrl)
  );
}

function firstParsableMetaDate(meta: MetaTags): string | null {
  for (const name of PUBLISHED_META_NAMES) {
    const date = firstDate(meta.elements(name));
    if (date) return date;
  }
  const published = meta.itemprop('datePublished');
  for (const attribute of PUBLISHED_MICRODATA_ATTRIBUTES) {
    const date = firstDate(published.filter((element) => element.hasAttribute(attribute)));
    if (date) return date;
  }
  return null;
}

function firstDate(elements: Iterable<DomElement>): string | null {
  for (const element of elements) {
    const date = parseDate(element.getAttribute('content') ?? element.getAttribute('datetime'));
    if (date) return date;
  }
  return null;
}

/** Class names that mark a <time> as the publication date rather than, say, an "updated" stamp. */
const PUBLISHED_HINT = /publish|posted|pubdate|entry-date|article-date|created/i;

function dateFromTimeElements(elements: PageElements): string | null {
  const candidates = elements.namedMatching('time', 'time[datetime]');
  const hinted = candidates.filter((time) => time.hasAttribute('pubdate') || PUBLISHED_HINT.test(`${time.className} ${time.parentElement?.className ?? ''}`));
  // A <time> inside the article is about the article; one elsewhere may date a teaser in a sidebar.
  const inArticle = candidates.filter((time) => time.closest('article, main, [role="main"]') !== null);
  for (const time of [...hinted, ...inArticle, ...candidates]) {
    const date = parseDate(time.getAttribute('datetime'));
    if (date) return date;
  }
  return null;
}

const URL_DATE_PATTERNS = [
  /\/((?:19|20)\d{2})\/(\d{1,2})\/(\d{1,2})(?:\/|$)/, // /2024/03/15/
  /[/_-]((?:19|20)\d{2})-(\d{2})-(\d{2})(?:[/_.-]|$)/, // /2024-03-15-slug
  /\/((?:19|20)\d{2})(\d{2})(\d{2})(?:\/|$)/, // /20240315/
];

export function dateFromUrl(pageUrl: string): string | null {
  let path: string;
  try {
    path = new URL(pageUrl).pathname;
  } catch {
    return null;
  }
  for (const pattern of URL_DATE_PATTERNS) {
    const match = pattern.exec(path);
    if (match) {
      const date = parseDate(`${match[1]}-${match[2]!.padStart(2, '0')}-${match[3]!.padStart(2, '0')}`);
      if (date) return date;
    }
  }
  return null;
}

/** Parses the date formats publishers use into ISO 8601 UTC; a value without a zone is read as UTC. */
export function parseDate(value: string | null | undefined): string | null {
  const time = utcMilliseconds(normalizeSpace(value));
  return time === null ? null : plausible(time);
}

function plausible(time: number): string | null {
  if (time < EARLIEST_PLAUSIBLE_DATE || time > Date.now() + FUTURE_TOLERANCE_MS) return null;
  return new Date(time).toISOString();
}

// ---------------------------------------------------------------------------------------------
// Language and canonical URL

function findLanguage(document: DomDocument, jsonLd: JsonLdObjects, meta: MetaTags): string | null {
  const declared = [
    document.documentElement.getAttribute('lang'),
    document.documentElement.getAttribute('xml:lang'),
    meta.content([['http-equiv', 'content-language'], ['name', 'language']]),
    meta.content([['property', 'og:locale']]),
    firstString([...jsonLd.articles, ...jsonLd.pages], ['inLanguage']),
  ];
  for (const candidate of declared) {
    const tag = toLanguageTag(candidate);
    if (tag) return tag;
  }
  return detectLanguageFromScript(document.body?.textContent ?? '');
}

/** "en_US" → "en-US", "EN" → "en", "en, fr" → "en"; placeholders and malformed tags → null. */
export function toLanguageTag(value: string | null | undefined): string | null {
  const first = normalizeSpace(value).split(/[,;\s]/)[0]?.replace(/_/g, '-');
  if (!first || /^(x-default|und|mul|zxx)$/i.test(first)) return null;
  try {
    return Intl.getCanonicalLocales(first)[0] ?? null;
  } catch {
    return null;
  }
}

export function findCanonicalUrl(elements: PageElements, pageUrl: string): string | null {
  for (const link of elements.named('link')) {
    const rel = link.getAttribute('rel');
    if (rel === null || !link.hasAttribute('href') || !rel.toLowerCase().split(/\s+/).includes('canonical')) continue;
    // An unparsable canonical is as good as none.
    const resolved = httpAddress(link.getAttribute('href') ?? '', pageUrl);
    if (resolved) return resolved.href;
  }
  return null;
}
