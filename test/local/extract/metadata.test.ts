import test from 'ava';
import { extractHtml, parseDate } from '../../../src/local/extract/index.js';

const ARTICLE_TEXT = '<p>' + 'The council met on Tuesday to discuss the new budget for the coming year. '.repeat(8) + '</p>';

interface PageParts {
  jsonLd?: unknown;
  meta?: string;
  time?: string;
  title?: string;
}

function page(parts: PageParts): string {
  return `<!doctype html><html lang="en-GB"><head>
    <title>${parts.title ?? 'Document title | The Daily Example'}</title>
    <meta property="og:site_name" content="The Daily Example">
    ${parts.meta ?? ''}
    ${parts.jsonLd === undefined ? '' : `<script type="application/ld+json">${JSON.stringify(parts.jsonLd)}</script>`}
    <link rel="canonical" href="/news/budget">
  </head><body><article><h1>Budget approved</h1>${parts.time ?? ''}${ARTICLE_TEXT}</article></body></html>`;
}

const URL_WITH_DATE = 'https://news.example/2021/04/05/budget-approved';
const JSON_LD = { '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'Headline from JSON-LD', datePublished: '2024-03-15T10:00:00+02:00' };
const OPEN_GRAPH = '<meta property="og:title" content="Headline from og"><meta property="article:published_time" content="2023-06-01T12:00:00Z">';
const TIME = '<time datetime="2022-02-02T08:30:00Z">2 February 2022</time>';

test('the date comes from JSON-LD first, then article meta, then <time>, then the URL', (t) => {
  t.is(extractHtml(page({ jsonLd: JSON_LD, meta: OPEN_GRAPH, time: TIME }), URL_WITH_DATE).datePublished, '2024-03-15T08:00:00.000Z');
  t.is(extractHtml(page({ meta: OPEN_GRAPH, time: TIME }), URL_WITH_DATE).datePublished, '2023-06-01T12:00:00.000Z');
  t.is(extractHtml(page({ time: TIME }), URL_WITH_DATE).datePublished, '2022-02-02T08:30:00.000Z');
  t.is(extractHtml(page({}), URL_WITH_DATE).datePublished, '2021-04-05T00:00:00.000Z');
  t.is(extractHtml(page({}), 'https://news.example/budget-approved').datePublished, null);
});

test('the title comes from JSON-LD, then og:title, then <title> without the site name', (t) => {
  t.is(extractHtml(page({ jsonLd: JSON_LD, meta: OPEN_GRAPH }), URL_WITH_DATE).title, 'Headline from JSON-LD');
  t.is(extractHtml(page({ meta: OPEN_GRAPH }), URL_WITH_DATE).title, 'Headline from og');
  t.is(extractHtml(page({}), URL_WITH_DATE).title, 'Document title');
});

test('JSON-LD is read inside @graph and arrays, and the article wins over the web page', (t) => {
  const graph = {
    '@context': 'https://schema.org',
    '@graph': [
      { '@type': 'WebSite', name: 'The Daily Example' },
      { '@type': 'WebPage', name: 'Page name', datePublished: '2020-01-01' },
      { '@type': ['Article', 'NewsArticle'], headline: 'Article in a graph', datePublished: '2024-01-31T23:00:00-05:00' },
    ],
  };
  const fromGraph = extractHtml(page({ jsonLd: graph }), URL_WITH_DATE);
  t.is(fromGraph.title, 'Article in a graph');
  t.is(fromGraph.datePublished, '2024-02-01T04:00:00.000Z');

  const fromArray = extractHtml(page({ jsonLd: [{ '@type': 'Organization', name: 'Org' }, { '@type': 'BlogPosting', headline: 'Post &amp; more', dateCreated: '2019-11-20' }] }), URL_WITH_DATE);
  t.is(fromArray.title, 'Post & more');
  t.is(fromArray.datePublished, '2019-11-20T00:00:00.000Z');
});

test('itemprop microdata counts as meta, and a related-article list in JSON-LD is not the page', (t) => {
  const microdata = extractHtml(page({ meta: '<meta itemprop="datePublished" content="2018-10-06">' }), 'https://x.example/a');
  t.is(microdata.datePublished, '2018-10-06T00:00:00.000Z');
  const list = { '@type': 'ItemList', itemListElement: [{ '@type': 'NewsArticle', headline: 'Someone else', datePublished: '2001-01-01' }] };
  const withList = extractHtml(page({ jsonLd: list, meta: OPEN_GRAPH }), URL_WITH_DATE);
  t.is(withList.title, 'Headline from og');
  t.is(withList.datePublished, '2023-06-01T12:00:00.000Z');
});

test('language and canonical URL', (t) => {
  const extracted = extractHtml(page({}), 'https://news.example/2021/04/05/budget-approved?utm_source=x');
  t.is(extracted.language, 'en-GB');
  t.is(extracted.canonicalUrl, 'https://news.example/news/budget');
  const korean = extractHtml(`<html><body><article><p>${'서울은 대한민국의 수도이며 가장 큰 도시입니다. '.repeat(10)}</p></article></body></html>`, 'https://k.example/');
  t.is(korean.language, 'ko');
});

test('parseDate reads dates without a zone as UTC and applies offsets', (t) => {
  t.is(parseDate('2019-11-20 09:28:00'), '2019-11-20T09:28:00.000Z');
  t.is(parseDate('2019-11-20T09:28:00.123+0530'), '2019-11-20T03:58:00.123Z');
  t.is(parseDate('Tue, 19 Nov 2019 22:10:00 GMT'), '2019-11-19T22:10:00.000Z');
  t.is(parseDate('November 19, 2019'), '2019-11-19T00:00:00.000Z');
  t.is(parseDate('2023-02-29'), null);
  t.is(parseDate('0001-01-01T00:00:00Z'), null);
  t.is(parseDate('not a date'), null);
});

test('meta names match whatever their case, an empty one is passed over, and the earlier name wins over an earlier tag', (t) => {
  const meta = [
    '<META NAME="DC.Date" CONTENT="2019-09-09">',
    '<meta Property="OG:Title" content="  ">',
    '<meta name="Twitter:Title" content="Headline from twitter">',
    '<meta property="og:title" content="Headline from og, second tag">',
    '<meta Property="Article:Published_Time" content="2020-01-02T03:04:05Z">',
  ].join('');
  const page_ = extractHtml(page({ meta }), 'https://news.example/budget');
  t.is(page_.title, 'Headline from og, second tag');
  t.is(page_.datePublished, '2020-01-02T03:04:05.000Z');
  t.is(extractHtml(page({ meta: '<meta name="twitter:title" content="Headline from twitter">' }), 'https://news.example/budget').title, 'Headline from twitter');
  t.is(extractHtml(page({ meta: '<meta name="DC.DATE" content="2019-09-09">' }), 'https://news.example/budget').datePublished, '2019-09-09T00:00:00.000Z');
});

interface HeadedPageParts {
  title: string;
  headings: string[];
  head?: string;
  jsonLd?: unknown;
}

/** A page whose <title>, <h1>s and other title sources are each given: the title is read by weighing them. */
function headedPage({ title, headings, head, jsonLd }: HeadedPageParts): string {
  return `<!doctype html><html lang="en"><head><title>${title}</title>${head ?? ''}
    ${jsonLd === undefined ? '' : `<script type="application/ld+json">${JSON.stringify(jsonLd)}</script>`}
  </head><body><header>${headings.length > 1 ? `<h1>${headings[0]}</h1>` : ''}</header>
    <main><h1>${headings[headings.length - 1] ?? ''}</h1>${ARTICLE_TEXT}</main></body></html>`;
}

test('the <h1> that is one of the <title>\'s parts is the headline, without the section and the site around it', (t) => {
  const category = headedPage({ title: 'Headlamps | Lighting | Outdoor Shop', headings: ['Headlamps'] });
  t.is(extractHtml(category, 'https://shop.example/c/headlamps').title, 'Headlamps');
  // The last part after a longer first one is where the site's or the book's name goes, even when the logo is an <h1>.
  const chapter = headedPage({ title: 'Defining Shared Behavior with Traits - The Rust Book', headings: ['The Rust Book', 'Traits: Defining Shared Behavior'] });
  t.is(extractHtml(chapter, 'https://book.example/ch10-02-traits.html').title, 'Defining Shared Behavior with Traits - The Rust Book');
});

test('a logo in an <h1>, by the site\'s declared name or by its address, is not the headline', (t) => {
  const byAddress = headedPage({ title: 'Example News | Council approves budget', headings: ['Example News', 'Council approves budget'] });
  t.is(extractHtml(byAddress, 'https://www.examplenews.test/2024/budget').title, 'Council approves budget');
  const byDeclaredName = headedPage({
    title: 'The Gazette | Council approves budget',
    headings: ['The Gazette', 'Council approves budget'],
    head: '<meta property="og:site_name" content="The Gazette">',
  });
  t.is(extractHtml(byDeclaredName, 'https://news.example/budget').title, 'Council approves budget');
});

test('a JSON-LD name no other source backs (an embedded video, a one-line description) gives way to the title the page shows', (t) => {
  const video = headedPage({
    title: 'Marketing software that grows with you | Example',
    headings: ['Marketing software'],
    head: '<meta property="og:title" content="Marketing software that grows with you">',
    jsonLd: { '@context': 'https://schema.org', '@type': 'VideoObject', name: 'final_cut_v2', uploadDate: '2024-01-01' },
  });
  t.is(extractHtml(video, 'https://example.com/products/marketing').title, 'Marketing software that grows with you');
  const encyclopedia = headedPage({
    title: 'List of films featuring time loops - Encyclopedia',
    headings: ['List of films featuring time loops'],
    jsonLd: { '@context': 'https://schema.org', '@type': 'Article', name: 'List of films featuring time loops', headline: 'list article of a wiki' },
  });
  t.is(extractHtml(encyclopedia, 'https://wiki.example/List_of_films_featuring_time_loops').title, 'List of films featuring time loops');
});

test('a headline its publisher escaped twice reads as written', (t) => {
  const twice = page({ title: 'And finally… trouble brewing | The Daily Example', jsonLd: { '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'And finally&amp;#8230; trouble brewing' } });
  t.is(extractHtml(twice, 'https://news.example/and-finally').title, 'And finally… trouble brewing');
});

test('on a shop\'s page the <h1> its <title> opens with is the title; the rest was written for search engines', (t) => {
  const title = 'Trail Runner 2 Men\'s Running Shoes - Free Shipping | Shoe Co';
  const offer = { '@type': 'Offer', price: '120.00', priceCurrency: 'USD' };
  const product = headedPage({ title, headings: ['Trail Runner 2'], jsonLd: { '@context': 'https://schema.org', '@type': 'Product', name: 'Trail Runner 2', offers: offer } });
  const extracted = extractHtml(product, 'https://shoes.example/p/trail-runner-2');
  t.is(extracted.pageType, 'product');
  t.is(extracted.title, 'Trail Runner 2');
  // An article's title is its own: its <h1> may be a shorter form of it.
  t.is(extractHtml(headedPage({ title, headings: ['Trail Runner 2'] }), 'https://blog.example/trail-runner-2').title, title);
});

test('a title that names a tag keeps it: the parser has decoded it already', (t) => {
  const element = headedPage({ title: '&lt;table&gt;: The Table element - HTML | Web Docs', headings: ['&lt;table&gt;: The Table element'] });
  t.is(extractHtml(element, 'https://docs.example/Web/HTML/Element/table').title, '<table>: The Table element');
});
