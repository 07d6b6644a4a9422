import test from 'ava';
import { removeBoilerplateElements } from '../../../src/local/extract/boilerplate.js';
import { parseDocument } from '../../../src/local/extract/dom.js';
import { extractHtml } from '../../../src/local/extract/index.js';

const PARAGRAPHS = [
  'The city council voted on Tuesday to expand the tram network by twelve kilometres, linking the northern suburbs to the centre.',
  'Construction is expected to begin next spring and to last three years, with the first new stops opening in the second year.',
  'Opponents argued that the money would be better spent on buses, which can serve more neighbourhoods for the same cost.',
  'The mayor said the tram would cut journey times in half for commuters and reduce traffic on the main roads into town.',
];

/** The story's paragraphs as markup, for the pages the tests build around them. */
const PARAGRAPHS_HTML = PARAGRAPHS.map((paragraph) => `<p>${paragraph}</p>`).join('');

const PAGE = `<!doctype html><html lang="en"><head><title>Council approves tram extension - Metro Daily</title>
<meta property="og:title" content="Council approves tram extension"></head><body>
<header class="site-header"><a href="/">Metro Daily</a><nav><a href="/news">News</a><a href="/sport">Sport</a></nav></header>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies?</div>
<main><article>
  <h1>Council approves tram extension</h1>
  <div class="byline">By Jane Reporter</div>
  <p class="dateline">Updated 10:01 pm PST, Tuesday, November 19, 2019</p>
  <div class="share-bar"><a href="https://facebook.com/share">Facebook</a><a href="https://twitter.com/share">Twitter</a><a href="mailto:">Email</a></div>
  <figure><img src="tram.jpg"><figcaption>A tram on the existing line near the station. Photo: Metro Daily</figcaption></figure>
  <p>${PARAGRAPHS[0]}</p>
  <p>${PARAGRAPHS[1]}</p>
  <p><strong>Related:</strong> <a href="https://metro.example/news/buses">Bus fares to rise in January</a></p>
  <p>${PARAGRAPHS[2]}</p>
  <div class="newsletter-signup"><h3>Get the morning briefing</h3><p>Sign up for our newsletter and never miss a story from the city.</p></div>
  <p>${PARAGRAPHS[3]}</p>
  <p>Advertisement</p>
  <ul class="related-stories"><li><a href="/news/a">Bridge closed for repairs over the weekend</a></li><li><a href="/news/b">New cycle lanes open on the ring road</a></li></ul>
</article></main>
<section id="comments"><h2>Comments</h2><div class="comment"><p>This is a terrible waste of money and nobody asked for a tram at all in this city.</p></div></section>
<footer><p>Copyright 2019 Metro Daily. All rights reserved.</p></footer>
</body></html>`;

test('the main text keeps the article and drops navigation, bylines, share bars, captions, teasers and comments', (t) => {
  const extracted = extractHtml(PAGE, 'https://metro.example/news/tram');
  t.is(extracted.text, PARAGRAPHS.join('\n\n'));
  t.is(extracted.title, 'Council approves tram extension');
});

test("a saved page read from a file is read as at its canonical address: its own site's teaser goes, relative links resolve there", (t) => {
  const saved = PAGE.replace('</title>', '</title><link rel="canonical" href="https://metro.example/news/tram">').replace(
    `<p>${PARAGRAPHS[3]}</p>`,
    `<p>${PARAGRAPHS[3]} See the <a href="/maps/tram.pdf">route map</a>.</p>`,
  );
  const fromFile = extractHtml(saved, 'file:///home/me/saved/tram.html', { markdown: true });
  t.false(fromFile.text.includes('Bus fares to rise in January'));
  t.true(fromFile.markdown?.includes('[route map](https://metro.example/maps/tram.pdf)'));
  t.is(fromFile.canonicalUrl, 'https://metro.example/news/tram');
  // With no address declared, the site is unknown and a link to it reads as a citation.
  const unknownSite = extractHtml(PAGE, 'file:///home/me/saved/tram.html');
  t.true(unknownSite.text.includes('Bus fares to rise in January'));
  // The address it was fetched from wins over the one it declares.
  const fetched = extractHtml(saved.replace('https://metro.example/news/tram"', 'https://mirror.example/tram"'), 'https://metro.example/news/tram', { markdown: true });
  t.true(fetched.markdown?.includes('[route map](https://metro.example/maps/tram.pdf)'));
  t.false(fetched.text.includes('Bus fares to rise in January'));
});

test("the markdown's relative links resolve against the page's <base href>, as a browser's do", (t) => {
  const body = `<article><h1>Tram vote</h1>${PARAGRAPHS_HTML}<p>The <a href="maps/route.pdf">route map</a> and the <a href="/minutes">minutes</a> are online.</p></article>`;
  const page = (head: string) => `<html><head><title>Tram vote</title>${head}</head><body>${body}</body></html>`;
  const based = extractHtml(page('<base href="https://static.metro.example/2019/">'), 'https://metro.example/news/tram-vote', { markdown: true });
  t.true(based.markdown?.includes('[route map](https://static.metro.example/2019/maps/route.pdf)'));
  t.true(based.markdown?.includes('[minutes](https://static.metro.example/minutes)'));
  // A relative base resolves against the page's address; with none, links resolve there.
  const relative = extractHtml(page('<base href="/archive/">'), 'https://metro.example/news/tram-vote', { markdown: true });
  t.true(relative.markdown?.includes('[route map](https://metro.example/archive/maps/route.pdf)'));
  const plain = extractHtml(page(''), 'https://metro.example/news/tram-vote', { markdown: true });
  t.true(plain.markdown?.includes('[route map](https://metro.example/news/maps/route.pdf)'));
});

test('a short lede that mentions a date, and a citation that is only a link, stay', (t) => {
  const lede = 'On Nov. 19, the council voted to extend the tram.';
  const citation = '<a href="https://transport.example/report.pdf">Read the transport authority report</a>';
  const html = `<html><head><title>Tram vote</title></head><body><article><h1>Tram vote</h1><p>${lede}</p>
    ${PARAGRAPHS_HTML}<p>${citation}</p></article></body></html>`;
  const extracted = extractHtml(html, 'https://metro.example/news/tram-vote');
  t.true(extracted.text.startsWith(lede));
  t.true(extracted.text.endsWith('Read the transport authority report'));
});

test('a wrapper whose class sounds like boilerplate is kept when it holds the article', (t) => {
  const html = `<html><body><div class="widget Blog"><div class="post-body">${PARAGRAPHS.map((paragraph) => `<div>${paragraph}</div>`).join('')}</div></div>
    <div class="sidebar"><p>${'Popular posts this week from around the whole blog network. '.repeat(2)}</p></div></body></html>`;
  const extracted = extractHtml(html, 'https://blog.example/2019/11/tram.html');
  for (const paragraph of PARAGRAPHS) t.true(extracted.text.includes(paragraph));
  t.false(extracted.text.includes('Popular posts'));
});

test("a page's footer is no wrapper of the post, even when its notes outweigh a short post", (t) => {
  const post = [
    'A colleague shared how her class turned their science fair posters into short videos this term.',
    'The students wrote the scripts themselves and filmed each other explaining one experiment.',
  ];
  const notes = [
    'Advertising here is sold by bid for three months at a time, and no advertiser is endorsed by being shown beside a post.',
    'This work is licensed under a Creative Commons licence: share it with credit, but do not sell it or change it.',
    'I follow the bloggers code of ethics: the links inside my posts are never for sale, and I say so when a product was sent to me.',
  ];
  const html = `<html><head><title>Posters become videos</title></head><body>
    <div class="content"><div class="date-header">Monday, November 5</div><h3 class="post-title">Posters become videos</h3>
      <div class="post-body">${post.map((sentence) => `<p>${sentence}</p>`).join('')}</div></div>
    <footer><div class="section">${notes.map((note, index) => `<div class="block"><h2>Note ${index + 1}</h2><p>${note}</p></div>`).join('')}</div></footer>
  </body></html>`;
  const extracted = extractHtml(html, 'https://teacher.example/2012/11/posters-become-videos.html');
  for (const sentence of post) t.true(extracted.text.includes(sentence), sentence);
  for (const note of notes) t.false(extracted.text.includes(note), note);
});

test("a byline that opens the story stays in its text; a bare dateline does not", (t) => {
  // No class names either line: only their words say what they are.
  const html = `<html><head><title>Council approves tram extension</title></head><body><div id="page">
    <div class="story"><p><b>By Jane Reporter, City Hall correspondent</b></p><p>Updated 10:01 pm PST, November 19, 2019</p>
      ${PARAGRAPHS_HTML}</div>
  </div></body></html>`;
  const extracted = extractHtml(html, 'https://metro.example/news/tram-22036778');
  t.true(extracted.text.startsWith('By Jane Reporter, City Hall correspondent'), extracted.text.slice(0, 80));
  t.false(extracted.text.includes('10:01 pm'));
  for (const paragraph of PARAGRAPHS) t.true(extracted.text.includes(paragraph), paragraph);
});

test("WordPress's post metadata line under a post is no part of it", (t) => {
  const html = `<html><head><title>Council approves tram extension</title></head><body><div id="content">
    <div class="post" id="post-42"><h2>Council approves tram extension</h2>
      <div class="entry">${PARAGRAPHS_HTML}</div>
      <p class="postmetadata alt"><small>This entry was posted on Tuesday, November 19th, 2019 at 10:01 pm and is filed under
        <a href="/category/city">City</a>. You can follow any responses to this entry through the <a href="/feed">RSS 2.0</a> feed.</small></p>
    </div></div></body></html>`;
  const extracted = extractHtml(html, 'https://metro.example/2019/11/tram/');
  for (const paragraph of PARAGRAPHS) t.true(extracted.text.includes(paragraph), paragraph);
  t.false(extracted.text.includes('This entry was posted'));
});

test('a block whose class or id calls it the foot of the page is its footer', (t) => {
  const notes = [
    'The Metro Daily is not responsible for the content of the external sites it links to, whatever they say.',
    'This page is best viewed in an up-to-date web browser with style sheets enabled; it can be read without them too.',
  ];
  // A footnote is the article's own: "footnotes" is one word, not the foot of the page.
  const footnote = '1. The twelve kilometres are counted along the new track, not as the crow flies between the two ends.';
  const html = `<html><head><title>Council approves tram extension</title></head><body><div id="page">
    <div class="story-body"><h1>Council approves tram extension</h1>${PARAGRAPHS_HTML}
      <div class="footnotes"><p>${footnote}</p></div></div>
    <div id="site-foot"><h2>Site links</h2><ul><li><a href="/about">About us</a></li><li><a href="/contact">Contact us</a></li></ul>
      ${notes.map((note) => `<p>${note}</p>`).join('')}</div>
  </div></body></html>`;
  const extracted = extractHtml(html, 'https://metro.example/news/tram-22036778');
  for (const paragraph of [...PARAGRAPHS, footnote]) t.true(extracted.text.includes(paragraph), paragraph);
  for (const note of notes) t.false(extracted.text.includes(note), note);
});

test("a column whose id calls it secondary is the page's sidebar; the class of a secondary colour is not", (t) => {
  const teasers = [
    'Trams run every ten minutes from Saturday on the new timetable, the operator said in a short notice.',
    'The bridge on the ring road reopens after six weeks of repairs, two days before the date first given.',
  ];
  // Bootstrap's colour class on the story's own note: not a column, whatever its word.
  const note = 'The vote was the third on the plan since 2017; the two before it failed by a single vote each.';
  const html = `<html><head><title>Council approves tram extension</title></head><body><div id="container">
    <div id="primaryContent"><h1>Council approves tram extension</h1>${PARAGRAPHS_HTML}
      <p class="text-secondary">${note}</p></div>
    <div id="secondaryContent"><h3>More news</h3><ul>${teasers.map((teaser) => `<li><h3>${teaser.split(' ').slice(0, 4).join(' ')}</h3><p>${teaser}</p><p>2019-11-18</p></li>`).join('')}</ul></div>
  </div></body></html>`;
  const extracted = extractHtml(html, 'https://metro.example/news/tram-22036778');
  for (const paragraph of [...PARAGRAPHS, note]) t.true(extracted.text.includes(paragraph), paragraph);
  for (const teaser of teasers) t.false(extracted.text.includes(teaser), teaser);
});

/** Titles of a blog's other posts, as a list of them shows them. */
const OTHER_POSTS = ['Bridge closed for repairs over the weekend', 'New cycle lanes open on the ring road', 'Night buses return to the harbour route'];
const OTHER_POST_LINKS = OTHER_POSTS.map((title, index) => `<a href="/2019/11/post-${index}/">${title}</a>`);
/** The same, each with its date and the opening of the post, as a list that outlasts the link pruning shows them. */
const OTHER_POST_TEASERS = OTHER_POST_LINKS.map(
  (link, index) => `<li>${link} <small>November ${18 - index}, 2019</small><p>The works were announced by the city's transport office in a short statement on its website.</p></li>`,
);

/** A post whose own block ends with `after`, on a blog page without a sidebar. */
function postEndingWith(after: string, paragraphs = PARAGRAPHS_HTML): string {
  return `<html><head><title>Council approves tram extension</title></head><body><div id="page">
    <div class="post"><h2>Council approves tram extension</h2><div class="entry">${paragraphs}${after}</div></div>
  </div></body></html>`;
}

test("a related-posts plugin's list in the post's own block goes, with its label", (t) => {
  const pages = {
    // A label written as a paragraph, then a paragraph of links (WordPress's Related Posts plugins).
    label: postEndingWith(`<p><strong>Related posts</strong>:</p><p>${OTHER_POST_LINKS.join('<br>')}</p>`),
    // A box that its heading opens, each title with its date.
    box: postEndingWith(`<div class="box"><h3>Related Posts</h3><ul>${OTHER_POST_TEASERS.join('')}</ul></div>`),
    // Flat markup: the heading, then its list, up to the next heading of its level.
    flat: postEndingWith(`<h4>More stories</h4><ul>${OTHER_POST_TEASERS.join('')}</ul><h4>About the author</h4><p>Jane Reporter covers the city council.</p>`),
  };
  for (const [shape, html] of Object.entries(pages)) {
    const extracted = extractHtml(html, 'https://metro.example/2019/11/tram/');
    for (const paragraph of PARAGRAPHS) t.true(extracted.text.includes(paragraph), `${shape}: ${paragraph}`);
    for (const title of OTHER_POSTS) t.false(extracted.text.includes(title), `${shape}: ${title}`);
    t.false(/related posts|more stories/i.test(extracted.text), `${shape}: the heading goes too`);
    if (shape === 'flat') t.true(extracted.text.includes('Jane Reporter covers the city council.'), 'the next section stays');
  }
});

test("a site's \"Latest news\" is a widget under a longer post, and the page's own items where nothing longer comes first", (t) => {
  const widget = `<div class="box"><h3>Latest news</h3><ul>${OTHER_POST_TEASERS.join('')}</ul></div>`;
  const underPost = extractHtml(postEndingWith(widget), 'https://metro.example/2019/11/tram/');
  for (const paragraph of PARAGRAPHS) t.true(underPost.text.includes(paragraph), paragraph);
  for (const title of OTHER_POSTS) t.false(underPost.text.includes(title), title);

  // A news section's front: the list under its heading is the content, each item a title and a summary.
  const items = PARAGRAPHS.map((paragraph, index) => `<li><h3><a href="/news/story-${index}">${paragraph.split(' ').slice(0, 5).join(' ')}</a></h3><p>${paragraph}</p></li>`);
  const front = `<html><head><title>Metro Daily</title></head><body><div id="page"><h1>Metro Daily</h1>
    <h2>Latest news</h2><ul class="stories">${items.join('')}</ul></div></body></html>`;
  const extracted = extractHtml(front, 'https://metro.example/news/');
  for (const paragraph of PARAGRAPHS) t.true(extracted.text.includes(paragraph), paragraph);
});

test('a class word that marks every text block of a page builder is its layout, not boilerplate', (t) => {
  const block = (paragraph: string) =>
    `<div class="builder-element builder-widget builder-widget-text-editor"><div class="builder-widget-container"><p>${paragraph}</p></div></div>`;
  const html = `<html><head><title>Tram vote</title></head><body>
    <div class="builder-section"><div class="builder-widget-wrap"><h1>Tram vote</h1>${PARAGRAPHS.map(block).join('')}</div></div>
    <div class="widget widget_recent_entries"><h3>Recent posts</h3><p>${'A short list of the latest posts from this blog. '.repeat(2)}</p></div>
  </body></html>`;
  const extracted = extractHtml(html, 'https://builder.example/tram-vote');
  for (const paragraph of PARAGRAPHS) t.true(extracted.text.includes(paragraph));
});

test('an article whose class names its author stays when its comments outweigh it, and a popup with a headline goes', (t) => {
  const comment = (index: number) =>
    `<div class="comment" id="comment-${index}"><p>Reader ${index} writes: ${'I have been waiting for this tram for years and I am glad it is finally coming. '.repeat(2)}</p></div>`;
  const html = `<html><head><title>Tram vote</title></head><body>
    <article class="entry author-jane post-12 type-post"><h1>Tram vote</h1>${PARAGRAPHS_HTML}</article>
    <div id="comments">${Array.from({ length: 4 }, (_, index) => comment(index)).join('')}</div>
    <div role="dialog" class="terms-popup"><h1>Terms of use</h1><p>${'By using this site you agree to these terms, which may change at any time. '.repeat(4)}</p></div>
  </body></html>`;
  const extracted = extractHtml(html, 'https://blog.example/tram-vote');
  t.true(extracted.text.endsWith(PARAGRAPHS.join('\n\n')));
  t.false(extracted.text.includes('Reader'));
  t.false(extracted.text.includes('Terms of use'));
});

test('a consent dialog goes even when it says more than the page, and its class words never pass for layout', (t) => {
  const consent = `<div id="consent-sdk" class="consent-centre"><div role="dialog" aria-modal="true" class="consent-panel"><h2>Privacy preference centre</h2>
    ${Array.from({ length: 6 }, (_, index) => `<p>Cookies of group ${index} may store or retrieve information on your browser, mostly to make the site work as you expect it to.</p>`).join('')}</div></div>`;
  const html = `<html><head><title>Tram vote</title></head><body><main><h1>Tram vote</h1><p>${PARAGRAPHS[0]}</p><p>${PARAGRAPHS[1]}</p></main>${consent}</body></html>`;
  const extracted = extractHtml(html, 'https://blog.example/tram-vote');
  t.true(extracted.text.includes(PARAGRAPHS[0]!));
  t.false(extracted.text.includes('Cookies of group'));
  // The pre-clean itself, which thread and product pages rely on to pick their region.
  const document = parseDocument(html);
  removeBoilerplateElements(document, { keepAllArticles: true });
  t.is(document.querySelector('[role="dialog"]'), null);
  t.truthy(document.querySelector('main'));
});

test("taxonomy classes are no class words, a custom taxonomy's (product_tag-…) too; a bare cat- is no taxonomy's", (t) => {
  const html = `<html><head><title>Tram vote</title></head><body><main><h1>Tram vote</h1>${PARAGRAPHS.map((text) => `<p>${text}</p>`).join('')}
    <div class="tag-trams">Filed under trams</div><div class="product_tag-tickets">A season ticket</div>
    <div class="cat-nav"><a href="/c/transport">Transport</a></div></main></body></html>`;
  const document = parseDocument(html);
  removeBoilerplateElements(document);
  t.truthy(document.querySelector('.tag-trams'));
  t.truthy(document.querySelector('[class="product_tag-tickets"]'));
  t.is(document.querySelector('.cat-nav'), null);
});

const MORE_PARAGRAPHS = [
  'A public meeting on the route through the old town will be held next month, before the final plans go to the council.',
  'Shop owners on the main street asked for deliveries to be allowed at night while the tracks are being laid.',
];

test('a page saved with a stylesheet before <head> is read from its body, not as a whole page of text', (t) => {
  const consent = '<div role="dialog"><p>We and our partners store and access information on your device to personalise ads.</p></div>';
  const html = `<!doctype html><html lang="de"><link rel="stylesheet" href="/late.css"><head><title>Tram vote</title></head><body><main><h1>Tram vote</h1>${[...PARAGRAPHS, ...MORE_PARAGRAPHS].map((paragraph) => `<p>${paragraph}</p>`).join('')}</main>${consent}</body></html>`;
  const extracted = extractHtml(html, 'https://blog.example/tram-vote');
  t.true(extracted.text.includes(PARAGRAPHS[3]!));
  t.is(extracted.pageType, 'article');
  t.false(extracted.text.includes('our partners'));
  t.is(extracted.language, 'de');
  t.is(extracted.title, 'Tram vote');
});

test("a page rendered by script shows its <noscript> content, however large the script's data payload", (t) => {
  const posts = [
    'I run the forum on a small VPS and the search index is rebuilt every night, which takes about four minutes now.',
    'Four minutes is fine for a nightly job, but you could also rebuild only the threads that changed since the last run.',
  ];
  // The app's state, as single-page apps embed it: a script whose text outweighs the page's prose.
  const payload = JSON.stringify({ discussions: Array.from({ length: 200 }, (_, index) => ({ id: index, title: `Thread number ${index}`, excerpt: 'x'.repeat(40) })) });
  const html = `<html><head><title>Nightly index rebuild</title></head><body>
    <div id="app"><div class="loading-error">Something went wrong while loading this page. Try again.</div>
    <main><noscript id="content"><div class="container"><h1>Nightly index rebuild</h1>
      ${posts.map((post, index) => `<article class="post"><div class="author">member${index}</div><div class="post-body"><p>${post}</p></div></article>`).join('')}
    </div></noscript></main></div>
    <script id="app-state" type="application/json">${payload}</script></body></html>`;
  const extracted = extractHtml(html, 'https://talk.example/d/12-nightly-index-rebuild');
  for (const post of posts) t.true(extracted.text.includes(post));
});

test('a page without an article falls back to its whole text, minus navigation', (t) => {
  const html = '<html><body><nav><a href="/">Home</a></nav><p>Opening hours: 9 to 5.</p></body></html>';
  t.is(extractHtml(html, 'https://shop.example/').text, 'Opening hours: 9 to 5.');
});

test('a class that hides part of an element (its label, its overflow) does not make it boilerplate', (t) => {
  const description = 'The kettle boils a full litre in under three minutes and keeps the water warm for an hour after it switches off.';
  const care = 'Descale the kettle once a month with a mild solution of citric acid and rinse it twice before the next use.';
  const html = `<html><head><title>Steel kettle</title></head><body>
    <div class="product"><h1>Steel kettle</h1><span class="price">€49.00</span><button class="add-to-cart">Add to cart</button>
      <div class="field field--name-body field--label-hidden"><p>${description}</p></div>
      <div class="rounded overflow-hidden"><h2>Care</h2><p>${care}</p></div>
      <div class="hidden"><p>${'A hidden promotion that the reader never sees on the page at all. '.repeat(2)}</p></div></div></body></html>`;
  const extracted = extractHtml(html, 'https://kitchen.example/p/kettle');
  t.is(extracted.pageType, 'product');
  t.true(extracted.text.includes(description));
  t.true(extracted.text.includes(care));
  t.false(extracted.text.includes('hidden promotion'));
});

test('utility classes with a variant or an arbitrary value do not make an element boilerplate', (t) => {
  const html = `<html><head><title>Tram vote</title></head><body>
    <article><h1>Tram vote</h1><div><p>${PARAGRAPHS[0]}</p><p>${PARAGRAPHS[1]}</p></div>
    <div class="sticky top-[var(--nav-height)]"><p>${PARAGRAPHS[2]}</p></div><div class="md:hidden lg:block"><p>${PARAGRAPHS[3]}</p></div></article></body></html>`;
  const extracted = extractHtml(html, 'https://metro.example/news/tram-vote');
  for (const paragraph of PARAGRAPHS) t.true(extracted.text.includes(paragraph));
});

test("a tooltip's or a popover's hover text stays out; a label in a Tailwind group named tooltip stays in", (t) => {
  const description = 'Closed-back headphones with fifty-millimetre drivers, padded ear cups and a detachable three-metre cable.';
  const tooltip = 'Impedance is the resistance a headphone offers to the signal; higher values need a stronger amplifier.';
  const popover = 'Free returns within thirty days on every order, whatever the reason, with a prepaid label in the box.';
  const html = `<html><head><title>Studio headphones</title></head><body><div class="product"><h1>Studio headphones</h1>
    <span class="price">€149.00</span><button class="add-to-cart">Add to cart</button><p>${description}</p>
    <dl class="specs"><dt>Impedance <span class="spec-tooltip">${tooltip}</span></dt><dd>32 ohms</dd>
    <dt><span class="relative inline-flex group/tooltip">Driver size</span></dt><dd>50 mm</dd></dl>
    <div class="returns-popover"><p>${popover}</p></div></div></body></html>`;
  const extracted = extractHtml(html, 'https://audio.example/p/studio-headphones');
  t.is(extracted.pageType, 'product');
  t.true(extracted.text.includes(description));
  t.true(extracted.text.includes('32 ohms'));
  t.false(extracted.text.includes(tooltip));
  t.false(extracted.text.includes(popover));
  t.true(extracted.text.includes('Driver size'));
});

test('on a product page, a section headed as other products is dropped, in nested and in flat markup', (t) => {
  const description = 'The kettle boils a full litre in under three minutes and keeps the water warm for an hour after it switches off.';
  const care = 'Descale the kettle once a month with a mild solution of citric acid and rinse it twice before the next use.';
  const others = ['Glass teapot with a steel infuser for loose leaves', 'Set of four stoneware mugs in matte grey glaze'];
  const html = `<html><head><title>Steel kettle</title></head><body><div class="product"><h1>Steel kettle</h1>
    <span class="price">€49.00</span><button class="add-to-cart">Add to cart</button>
    <h2>Description</h2><p>${description}</p><h2>Care</h2><p>${care}</p>
    <section><div><h2>Customers also viewed</h2></div><ul><li>${others[0]} <a href="/p/2">View</a></li></ul></section>
    <h2>Similar items</h2><p>${others[1]}, <a href="/p/3">see details</a></p></div></body></html>`;
  const extracted = extractHtml(html, 'https://kitchen.example/p/kettle');
  t.is(extracted.pageType, 'product');
  t.true(extracted.text.includes(description));
  t.true(extracted.text.includes(care));
  for (const other of others) t.false(extracted.text.includes(other));
  t.notRegex(extracted.text, /also viewed|Similar items/);
});

test("on a product page, the customers' reviews and questions are dropped; the publisher's reviews stay", (t) => {
  const description = 'A field guide to the mosses of northern Europe, with a key that works from a hand lens and two hundred drawings.';
  const blurb = 'Clear, patient and beautifully drawn: the guide every walker with a hand lens has been waiting for.';
  const customerReview = 'Bought this for my father and he takes it on every walk now, the drawings are lovely and the key is easy to follow.';
  const answer = 'Yes, it covers the Baltic coast as well as the mountains, with a separate chapter on the dune mosses.';
  const review = (name: string, text: string) => `<div class="a-section"><span>${name}</span><h4>Reviewed on 3 May 2026</h4><p>${text}</p></div>`;
  const html = `<html><head><title>Mosses of the North</title></head><body><div class="product"><h1>Mosses of the North</h1>
    <span class="price">€34.00</span><button class="add-to-cart">Add to cart</button>
    <h2>Description</h2><p>${description}</p>
    <div><h2>Editorial reviews</h2><p>${blurb}</p></div>
    <div><h2>Customer reviews</h2>${review('Ann', customerReview)}${review('Bo', 'Solid binding and good paper, it survived a wet week in the hills without a mark on it.')}</div>
    <div><h3>Questions &amp; answers</h3><p>Does it cover the coast?</p><p>${answer}</p></div></div></body></html>`;
  const extracted = extractHtml(html, 'https://books.example/p/mosses');
  t.is(extracted.pageType, 'product');
  t.true(extracted.text.includes(description));
  t.true(extracted.text.includes(blurb));
  t.false(extracted.text.includes(customerReview));
  t.false(extracted.text.includes(answer));
});

test("on a product page, a block of customer reviews goes by its class when no heading names it; editorial reviews and a rating summary stay", (t) => {
  const description = 'A waxed cotton rucksack of twenty-five litres with a padded laptop sleeve and leather straps that soften with use.';
  const pressQuote = 'The best-made bag we tested this year: it shrugged off a week of rain and still looked new.';
  const customerTexts = [
    'I carry it to work every day and the straps have not frayed after two winters of rain and snow.',
    'Roomy enough for a laptop, a lunch box and a jumper, and it still looks smart in a meeting.',
    'The zip stuck at first but loosened after a week, otherwise a very well made bag for the price.',
  ];
  const customerReview = (text: string, index: number) =>
    `<li class="review"><span class="review-author">Buyer ${index + 1}</span><span class="review-stars">5</span><p class="review-text">${text}</p></li>`;
  const html = `<html><head><title>Field rucksack</title></head><body><div class="product"><h1>Field rucksack</h1>
    <span class="price">€129.00</span><button class="add-to-cart">Add to cart</button>
    <div class="rating-reviews-summary">4.6 out of 5</div>
    <p>${description}</p>
    <div class="editorial-reviews"><div class="review"><p class="review-text">${pressQuote}</p><span class="review-source">Outdoor Monthly</span></div></div>
    <section class="product-reviews"><h2>What buyers think</h2><ul>${customerTexts.map(customerReview).join('')}</ul></section></div></body></html>`;
  const extracted = extractHtml(html, 'https://bags.example/p/field-rucksack');
  t.is(extracted.pageType, 'product');
  t.true(extracted.text.includes(description));
  t.true(extracted.text.includes(pressQuote));
  t.true(extracted.text.includes('4.6 out of 5'));
  for (const text of customerTexts) t.false(extracted.text.includes(text), text);
});

test('on a product page, a section rendered twice is kept once, and lines repeated under different plans stay', (t) => {
  const story = 'Every kettle is pressed from a single sheet of brushed steel, so there is no seam for limescale to gather in over the years.';
  const feature = 'Free descaling kit';
  const plan = (name: string, price: string) => `<div class="plan"><h3>${name}</h3><p>${price}</p><ul><li>${feature}</li><li>Two-year warranty</li></ul></div>`;
  const html = `<html><head><title>Steel kettle</title></head><body><div class="product"><h1>Steel kettle</h1>
    <span class="price">€49.00</span><button class="add-to-cart">Add to cart</button>
    <div class="story-desktop"><h2>Our story</h2><p>${story}</p></div><div class="story-mobile"><h2>Our story</h2><p>${story}</p></div>
    <h2>Plans</h2>${plan('Basic', '€49.00 once')}${plan('Care', '€59.00 once')}</div></body></html>`;
  const extracted = extractHtml(html, 'https://kitchen.example/p/kettle');
  t.is(extracted.pageType, 'product');
  t.is(extracted.text.split(story).length - 1, 1);
  t.is(extracted.text.split(feature).length - 1, 2);
});

/** A product page whose name and price recur in a sticky purchase bar, a gallery caption and the copy laid out for phones. */
function productWithRepeatedLines(): string {
  const description = 'A stovetop kettle pressed from one sheet of brushed steel, with a whistle that sounds before the water boils over.';
  const body = `<div class="product"><div class="gallery"><img src="k.jpg"><p>Steel kettle, 1.5 litres</p></div>
    <h1>Steel kettle, 1.5 litres</h1><div class="price">€49.00</div>
    <p>${description}</p>
    <div class="specification"><table><tr><th>Property</th><th>Value</th></tr><tr><td>Capacity</td><td>1.5 litres</td></tr><tr><td>Weight</td><td>0.9 kg</td></tr></table></div>
    <section class="compatibility"><h2>Hobs</h2><table><tr><th>Property</th><th>Value</th></tr><tr><td>Hob</td><td>Gas, induction</td></tr></table></section>
    <div class="mobile-summary">Steel kettle, 1.5 litres<br>€49.00<br>Ships in two days</div>
    <div class="sticky-bar"><span class="name">Steel kettle, 1.5 litres</span></div>
    <pre><code>kettle.boil()<br>kettle.boil()</code></pre></div>`;
  return `<html><head><title>Steel kettle, 1.5 litres</title>
    <script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Steel kettle, 1.5 litres","offers":{"@type":"Offer","price":"49.00","priceCurrency":"EUR"}}</script>
    </head><body>${body}</body></html>`;
}

test("on a product page, the name and price printed again in a purchase bar, a caption and the phones' copy are read once, in text and markdown", (t) => {
  const page = extractHtml(productWithRepeatedLines(), 'https://kitchen.example/p/steel-kettle', { markdown: true });
  t.is(page.pageType, 'product');
  const count = (text: string, line: string) => text.split('\n').filter((each) => each.replace(/[#*|\s]+/g, ' ').trim() === line).length;
  for (const rendering of [page.text, page.markdown!]) {
    t.is(count(rendering, 'Steel kettle, 1.5 litres'), 1, rendering);
    t.is(count(rendering, '€49.00'), 1, rendering);
    t.true(rendering.includes('Ships in two days'));
    t.true(rendering.includes('Gas, induction'));
    // Code repeats as it was written.
    t.is(rendering.split('kettle.boil()').length - 1, 2);
  }
  // Each table keeps its header row, and a value that recurs inside a longer row stays.
  t.is(page.text.split('Property').length - 1, 2);
  t.true(page.text.includes('Capacity'));
  t.true(page.text.includes('1.5 litres'));
});

test('a page of 20,000 nested elements is extracted, as text and as markdown, instead of overflowing the stack', (t) => {
  const depth = 20_000;
  const article = `<h1>Deep page</h1><p>${'The words of the deepest paragraph, which is the page. '.repeat(12)}</p>`;
  const html = `<html><head><title>Deep page</title></head><body>${'<div>'.repeat(depth)}${article}${'</div>'.repeat(depth)}</body></html>`;
  const page = extractHtml(html, 'https://example.com/deep', { markdown: true });
  t.true(page.text.includes('The words of the deepest paragraph'));
  t.true(page.markdown!.includes('The words of the deepest paragraph'));
});

test("what the page's utility class hides (d-none) is left out, unless a class shows it from a screen size up", (t) => {
  const desktopOnly = 'The full timetable for the new line is printed on the back of every ticket sold this month.';
  const html = `<html><head><title>Tram vote</title></head><body><article><h1>Tram vote</h1>
    <div class="d-none" itemprop="datePublished">2019-11-19 21:30:00 +00:00</div>
    ${PARAGRAPHS_HTML}
    <p class="d-none d-md-block">${desktopOnly}</p><p class="d-none">Machine copy of the summary for search engines only.</p></article></body></html>`;
  const extracted = extractHtml(html, 'https://metro.example/news/tram-vote');
  for (const paragraph of PARAGRAPHS) t.true(extracted.text.includes(paragraph));
  t.true(extracted.text.includes(desktopOnly));
  t.false(extracted.text.includes('2019-11-19'));
  t.false(extracted.text.includes('Machine copy'));
});

test("what d-none hides says nothing of the page either: neither its JSON-LD nor its date is read", (t) => {
  // The page's elements are read once, before the hidden ones go; read again after, they must not hold them.
  const html = `<html><head><title>Tram vote</title></head><body><article><h1>Tram vote</h1>
    <div class="d-none"><script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Tram pass","offers":{"@type":"Offer","price":"49.00","priceCurrency":"EUR"}}</script>
      <time itemprop="datePublished" datetime="2001-02-03">3 February 2001</time></div>
    ${PARAGRAPHS_HTML}</article></body></html>`;
  const extracted = extractHtml(html, 'https://metro.example/news/tram-vote');
  t.not(extracted.pageType, 'product');
  t.is(extracted.datePublished, null);
  t.false(extracted.text.includes('49.00'));
});

test('a highlighted code block in upper-case markup reads one line per line: its tag is found whatever its case', (t) => {
  const html = `<HTML><HEAD><TITLE>Start</TITLE></HEAD><BODY><MAIN><H1>Start</H1><P>${PARAGRAPHS[0]}</P>
    <PRE><CODE><SPAN CLASS="line">npm create app</SPAN><SPAN CLASS="line">cd app</SPAN></CODE></PRE><P>${PARAGRAPHS[1]}</P></MAIN></BODY></HTML>`;
  t.true(extractHtml(html, 'https://bundler.example/docs/start').text.includes('npm create app\ncd app'));
});

test("a page saved with its </title> lost is read as the article it is, not as an empty body", (t) => {
  const paragraphs = [
    'The city council approved the new river bridge on Tuesday after a debate that ran late into the evening.',
    'Supporters said the crossing would cut the trip between the two districts from forty minutes to ten.',
    'Opponents questioned its cost, which has risen twice since the first plans were drawn three years ago.',
    'Work is due to start in the spring, and the bridge should open to traffic before the end of next year.',
    'The design keeps a lane for bicycles on each side and a footpath wide enough for the weekend market crowds.',
    'Residents near the old ferry landing asked for a noise study, and the council agreed to pay for one this winter.',
    'The ferry will keep running until the bridge opens, on its winter timetable, with an extra boat at rush hour.',
  ];
  const html = `<html><head><title>Council approves bridge</tit language="JavaScript" src="/menu.js"></script></head>
    <body><div id="menu"><a href="/">Home</a> <a href="/news">News</a></div>
    <div class="story"><h1>Council approves bridge</h1>${paragraphs.map((paragraph) => `<p>${paragraph}</p>`).join('')}</div></body></html>`;
  const extracted = extractHtml(html, 'https://news.example/2024/council-approves-bridge');
  t.is(extracted.title, 'Council approves bridge');
  for (const paragraph of paragraphs) t.true(extracted.text.includes(paragraph), paragraph);
});

test("a table whose cells have no <tr> (old hand-written pages) keeps its text, as text and as markdown", (t) => {
  const paragraphs = [
    'The school teaches from the primary years to the university stage, sixteen years of study in all.',
    'Its library holds manuscripts in Arabic, Persian and Urdu, and is open to visiting scholars every weekday.',
    'Students live on the campus, and the term begins after the summer holidays each year, as the table shows.',
  ];
  const html = `<html><head><title>About the school</title></head><body><div id="menu"><a href="/">Home</a> <a href="/courses">Courses</a></div>
    <div class="story"><h1>About the school</h1>${paragraphs.map((paragraph) => `<p>${paragraph}</p>`).join('')}
    <table border="1"><td>Term begins</td><td>After the summer holidays, in the month of Shawwal</td></table></div></body></html>`;
  const extracted = extractHtml(html, 'https://school.example/about', { markdown: true });
  for (const paragraph of paragraphs) t.true(extracted.text.includes(paragraph), paragraph);
  t.regex(extracted.text, /Term begins\s+After the summer holidays, in the month of Shawwal/);
  t.regex(extracted.markdown ?? '', /\| Term begins \| After the summer holidays, in the month of Shawwal \|/);
});

test('a table reads row by row: a layout table\'s columns do not interleave, and a data row is one line', (t) => {
  const columns = [
    'The village hall was built in 1902 by subscription, and it has served as school, chapel and dance hall since then.',
    'The committee meets on the first Monday of each month, and anyone who lives in the parish may come and speak there.',
  ];
  const notes = 'Bookings for the winter season open in September; the hall seats one hundred and twenty people at tables.';
  const html = `<html><head><title>The village hall</title></head><body><div id="menu"><a href="/">Home</a> <a href="/events">Events</a></div>
    <div class="story"><h1>The village hall</h1>
    <table width="760"><tr><td valign="top"><p>${columns[0]}</p><p>${notes}</p></td><td valign="top"><p>${columns[1]}</p></td></tr></table>
    <table class="facts"><caption>Hall at a glance</caption><tr><th>Seats</th><td>120</td></tr><tr><th>Kitchen</th><td>Gas cooker, two ovens</td></tr></table>
    </div></body></html>`;
  const extracted = extractHtml(html, 'https://village.example/hall');
  // A grid wraps each cell at 60 characters and sets the columns side by side: no sentence would be whole.
  for (const sentence of [...columns, notes]) t.true(extracted.text.includes(sentence), sentence);
  t.true(extracted.text.indexOf(notes) < extracted.text.indexOf(columns[1]!), 'the first column before the second');
  t.regex(extracted.text, /^Hall at a glance$/m);
  t.regex(extracted.text, /^Seats 120$/m);
  t.regex(extracted.text, /^Kitchen Gas cooker, two ovens$/m);
});

test("a video's fallback text and an icon's tooltip, which a reader does not see on the page, stay out of the text and the markdown", (t) => {
  const paragraphs = [
    'The ferry crossing takes forty minutes in calm weather, and the boats leave every half hour from the old harbour.',
    'Bicycles travel free on the lower deck, and the café on the upper deck serves hot food until the last crossing.',
    'In winter the timetable thins to one boat an hour, and the first crossing of the day is cancelled in high winds.',
  ];
  const html = `<html><head><title>Crossing to the island</title></head><body><div id="menu"><a href="/">Home</a></div>
    <div class="story"><h1>Crossing to the island</h1><p><svg viewBox="0 0 16 16"><title>ferry-icon</title><desc>A boat on waves</desc><path d="M0 8h16"/></svg> ${paragraphs[0]}</p>
    <video src="/media/crossing.mp4" controls>Your browser does not support the video tag.</video>
    <p>${paragraphs[1]}</p><audio src="/media/horn.mp3">Your browser cannot play this sound.</audio><p>${paragraphs[2]}</p></div></body></html>`;
  const extracted = extractHtml(html, 'https://ferry.example/crossing', { markdown: true });
  for (const paragraph of paragraphs) t.true(extracted.text.includes(paragraph), paragraph);
  t.notRegex(extracted.text, /does not support|cannot play|ferry-icon|boat on waves/);
  t.notRegex(extracted.markdown ?? '', /does not support|cannot play|ferry-icon|boat on waves/);
});

test("a short post whose one long comment outweighs it keeps the post, and the comment stays out", (t) => {
  const post = 'A colleague sent me a line worth keeping: quiet and slowness are where thinking happens, and a day without either is a day of reacting.';
  const comment = [
    'I agree with most of this, but, frankly, the etymology in the quoted passage is off, and it deserves a closer look than it got here.',
    'The word the passage leans on came into English from French, in the fifteenth century, and its first senses were to divert, to beguile, or to delude.',
    'Reading it as a negative prefix, in front of the verb for pondering, is a folk etymology, a pleasing one, that the dictionaries do not support.',
    'None of that changes the point about quiet, which I find true, day after day, in my own work; the argument, however, does not need it.',
  ].join(' ');
  const html = `<html><head><title>Silence and slowness</title></head><body>
    <div id="header"><a href="/">The Notebook</a></div>
    <div class="post hentry"><div class="headline_area"><h1>Silence and slowness</h1><p>by John on July 14, 2012</p></div>
      <div class="format_text entry-content"><p>From a colleague:</p><blockquote><p>${post}</p></blockquote>
      <p><strong>Related posts</strong>:</p><p><a href="/2011/10/04/attention/">On attention</a><br><a href="/2012/02/25/noise/">Noise</a></p></div></div>
    <div id="comments"><div class="comments_intro"><p>2 comments</p></div><dl id="comment_list">
      <dt class="comment"><span class="comment_author">Nathan</span> <span class="comment_time">07.16.12</span></dt>
      <dd class="comment"><div class="format_text"><p>Lovely quote, thanks for sharing it.</p></div></dd>
      <dt class="comment alt"><span class="comment_author">Mike</span> <span class="comment_time">07.16.12</span></dt>
      <dd class="comment alt"><div class="format_text"><p>${comment}</p></div></dd>
    </dl></div></body></html>`;
  const extracted = extractHtml(html, 'https://notebook.example/2012/07/14/silence-and-slowness/');
  t.is(extracted.pageType, 'article');
  t.true(extracted.text.includes(post));
  t.notRegex(extracted.text, /etymology|Lovely quote/);
});

test("a photo's caption in a block classed caption (WordPress's wp-caption) stays with the article's text", (t) => {
  const paragraphs = [
    'The storm reached the coast on Tuesday night and brought down power lines across three counties before dawn.',
    'Crews worked through the morning to clear the main roads, and most homes had power again by the afternoon.',
    'The weather service expects a calmer week, with rain on Thursday and temperatures close to the seasonal average.',
  ];
  const caption = 'Crews clear a fallen oak from the coast road near the harbour on Wednesday morning.';
  const html = `<html><head><title>Storm brings down power lines</title></head><body><nav><a href="/">Home</a> <a href="/news">News</a></nav>
    <article><h1>Storm brings down power lines</h1><p>${paragraphs[0]}</p>
    <div class="wp-caption aligncenter"><img src="/oak.jpg" alt=""><p class="wp-caption-text">${caption}</p></div>
    <p>${paragraphs[1]}</p><p>${paragraphs[2]}</p></article></body></html>`;
  const extracted = extractHtml(html, 'https://news.example/2024/03/storm-power-lines');
  for (const paragraph of paragraphs) t.true(extracted.text.includes(paragraph), paragraph);
  t.true(extracted.text.includes(caption));
});

test("a short post keeps no comment-section chrome: an empty comments heading, 'No comments yet', the comments feed and trackback lines", (t) => {
  const post = 'A short animated film made for a band we like, drawn by hand over a whole winter, frame by frame.';
  const html = `<html><head><title>La Muerte</title><meta property="og:type" content="article"></head><body>
    <div id="page"><div id="header"><a href="/">Frames</a></div><div id="content">
      <div class="post"><h2>La Muerte</h2><div class="entry"><p>${post}</p></div>
        <p class="postmetadata">You can follow any responses to this entry through the RSS 2.0 feed. You can leave a response, or trackback from your own site.</p></div>
      <h3>Comments (0)</h3><p>No comments yet.</p>
      <p><a href="/la-muerte/feed/">RSS feed for comments on this post.</a></p><p><a href="/la-muerte/trackback/">TrackBack URI</a></p>
    </div></div></body></html>`;
  const extracted = extractHtml(html, 'https://frames.example/2012/la-muerte/');
  t.is(extracted.pageType, 'article');
  t.true(extracted.text.includes(post));
  t.notRegex(extracted.text, /Comments \(0\)|No comments yet|RSS feed|TrackBack|follow any responses/i);
});

test("an article's data table of links stays whole, even classed as a sticky header (MediaWiki's sortable tables)", (t) => {
  const paragraphs = [
    'The society has awarded its medal for cartography every year since 1921, to a person whose maps changed how a region was seen.',
    'Winners receive a silver medal and a small grant, and are invited to give the society a lecture in the following spring.',
    'The table below lists every winner since the first award, by year, with the region their best-known work described.',
  ];
  const winners = ['Agnes Holloway', 'Tomas Verlaine', 'Ruth Okonkwo', 'Piet Halvorsen', 'Mira Castellanos', 'Jonas Eklund', 'Salma Haddad', 'Leon Marchetti'];
  const rows = winners
    .map((name, index) => `<tr><th scope="row">${1921 + index}</th><td><a href="/wiki/${name.replace(' ', '_')}">${name}</a></td><td><a href="/wiki/Region_${index}">Region ${index + 1}</a></td></tr>`)
    .join('');
  const html = `<html><head><title>Medal for cartography</title><meta property="og:type" content="article"></head><body><nav><a href="/">Main page</a> <a href="/random">Random</a></nav>
    <main><div class="mw-parser-output"><h1>Medal for cartography</h1><p>${paragraphs[0]}</p><p>${paragraphs[1]}</p><h2>Winners</h2><p>${paragraphs[2]}</p>
    <table class="wikitable sortable sticky-header"><tbody><tr><th>Year</th><th>Winner</th><th>Region</th></tr>${rows}</tbody></table></div></main></body></html>`;
  const extracted = extractHtml(html, 'https://wiki.example/wiki/Medal_for_cartography');
  t.is(extracted.pageType, 'article');
  for (const paragraph of paragraphs) t.true(extracted.text.includes(paragraph), paragraph);
  for (const name of winners) t.true(extracted.text.includes(name), name);
});

test("a page whose Readability block is one of its sections keeps the sections it left out, unless the page declares an article in schema.org markup", (t) => {
  const partners = ['Northwind', 'Contoso', 'Fabrikam', 'Tailspin', 'Litware', 'Adatum']
    .map((name) => `<div class="card"><h3>${name}</h3><p>We work with ${name}, as a certified partner, to secure your workloads, your identities and your data, wherever they run.</p></div>`)
    .join('');
  const sections = [
    ['Predict and prevent attacks', 'Our analysts study the threats aimed at your sector every day, and they tune your defences before an attack reaches you.'],
    ['Respond within the hour', 'When an incident happens, our responders join your call within the hour, contain the damage and keep a record that your insurer accepts.'],
    ['Train the people who click', 'Most breaches start with one person opening one link, so we train every team with short sessions built on real attacks.'],
    ['Report to your board', 'Each quarter you get a short report that your board can read and a longer one that your engineers can act on.'],
    ['Keep your cloud in check', 'We review the settings of every cloud account you run, and we alert you the day one of them opens a door it should not.'],
    ['Meet the rules you answer to', 'Our consultants map your controls to the standards your customers and regulators ask for, and they prepare you for each audit.'],
  ];
  const sectionHtml = sections
    .map(([heading, text]) => `<div class="section"><div class="container"><div class="row"><div class="col"><h2>${heading}</h2><p>${text}</p></div></div></div></div>`)
    .join('');
  const page = (head: string) => `<html><head><title>Security services</title>${head}</head><body><header><nav><a href="/">Home</a> <a href="/services">Services</a></nav></header>
    <main><div class="hero"><h1>Security services</h1><p>Protect your business with a partner that stays with you.</p></div>${sectionHtml}
    <div class="partners"><h2>Our partners</h2><div class="grid">${partners}</div></div></main><footer><p>Copyright 2024 Shield Partners</p></footer></body></html>`;

  const servicePage = extractHtml(page(''), 'https://shield.example/services/security');
  t.is(servicePage.pageType, 'article');
  for (const [heading, text] of sections) {
    t.true(servicePage.text.includes(heading!), heading);
    t.true(servicePage.text.includes(text!), text);
  }
  t.true(servicePage.text.includes('We work with Contoso'));

  const declaredArticle = extractHtml(page('<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article","headline":"Security services"}</script>'), 'https://shield.example/services/security');
  t.true(declaredArticle.text.includes('We work with Contoso'));
  t.false(declaredArticle.text.includes(sections[1]![1]!));
});

test("an article keeps out a longer list of teasers beside it, whose summaries read as sentences", (t) => {
  const paragraphs = [
    'The harbour board voted on Monday to rebuild the north pier, which has been closed to ferries since a storm cracked its supports in March.',
    'Work is to start in the autumn and to take two years, and ferries will use a temporary landing at the fish market until it is done.',
    'Fishing crews said the temporary landing would crowd the market at its busiest hours, and asked the board to limit ferry times there.',
    'The board said it would publish a timetable for the landing next month, after talks with the ferry companies and the crews.',
  ];
  const teasers = Array.from({ length: 12 }, (_, index) => [
    `Story ${index + 1}: the council looks again at parking on the seafront`,
    `Residents of the seafront streets, in a meeting that ran late into the evening, asked the council for the ${index + 1}th time to think again about parking.`,
  ]);
  const html = `<html><head><title>Harbour board votes to rebuild north pier</title><meta property="og:type" content="article"></head><body>
    <main><article class="story"><h1>Harbour board votes to rebuild north pier</h1>${paragraphs.map((paragraph) => `<p>${paragraph}</p>`).join('')}</article>
    <div class="more"><h2>More from the coast</h2><ul>${teasers.map(([title, summary]) => `<li><article><h3><a href="/coast/${title!.length}">${title}</a></h3><p>${summary}</p></article></li>`).join('')}</ul></div></main></body></html>`;
  const extracted = extractHtml(html, 'https://coast.example/news/north-pier');
  t.is(extracted.pageType, 'article');
  for (const paragraph of paragraphs) t.true(extracted.text.includes(paragraph), paragraph);
  t.notRegex(extracted.text, /seafront|More from the coast/);
});

test("a page its scripts render (an empty shell) has its description as its text; a page that shows text keeps its own", (t) => {
  const firstPost = 'I am new to home automation and want to start with a door sensor and a camera. Which hub would you pick first, and where do you buy it at a fair price?';
  const shell = (body: string) => `<!doctype html><html><head><title>Where should I start? - Community</title>
    <meta name="description" content="I am new to home automation and want to start with a door sensor&hellip;">
    <meta property="og:description" content="${firstPost}">
    <script src="/assets/app.js"></script></head><body>${body}<script>window.preloaded = ${JSON.stringify({ posts: 'x'.repeat(2000) })};</script></body></html>`;

  const empty = extractHtml(shell('<div id="app"></div>'), 'https://community.example/t/where-should-i-start/1');
  t.is(empty.text, firstPost);
  t.is(extractHtml(shell('<div id="app"></div>'), 'https://community.example/t/1', { markdown: true }).markdown, firstPost);

  const headerOnly = extractHtml(shell('<header><a href="/">community.example</a> <a href="/donate">donate now</a></header>'), 'https://community.example/t/1');
  t.is(headerOnly.text, firstPost);

  const reply = 'A hub that speaks Zigbee is the usual first step: the sensors are cheap, run on batteries for years, and work without a cloud account.';
  const rendered = extractHtml(shell(`<main><h1>Where should I start?</h1><p>${firstPost}</p><p>${reply}</p></main>`), 'https://community.example/t/1');
  t.true(rendered.text.includes(reply));

  const shortPage = `<html><head><meta name="description" content="${firstPost}"></head><body><p>${'Opening hours: 9 to 5, Monday to Friday. '.repeat(6)}</p></body></html>`;
  t.notRegex(extractHtml(shortPage, 'https://shop.example/hours').text, /home automation/);

  const challenge = `<html><head><title>Just a moment...</title><meta name="description" content="${firstPost}"></head><body><div id="challenge-running">Checking your browser before accessing the site.</div></body></html>`;
  const challenged = extractHtml(challenge, 'https://community.example/t/1');
  t.true(challenged.isChallenge);
  t.is(challenged.text, '');
});

test("a word of a sentence that links to a tag page stays in the sentence; a tag list and screen-reader text stay out", (t) => {
  const html = `<html><head><title>Players kneel during the anthem again</title></head><body><main><article>
    <h1>Players kneel during the anthem again</h1>
    <p>The league's players were back at it on Thursday night, protesting during the <a href="/tag/national-anthem/" id="auto-tag_national-anthem">national anthem</a> before the first full week of games.</p>
    <p>After a quiet opening game last week, there were several demonstrations, and the <a href="/tag/players-union/" class="tag-link">players' union</a> said no one would be punished while talks go on.</p>
    <p>Two receivers knelt before their game on the coast, and a defensive end raised his fist as the anthem played, as he had done all of last season.<span class="sr-only"> Opens a video in a new window.</span></p>
    <p>The league said in May that players had to stand or stay in the locker room, and the teams were to set the penalties themselves.</p>
    <div class="tags">Tags: <a href="/tag/nfl/" class="tag">NFL</a> <a href="/tag/protest/" class="tag">Protest</a></div>
  </article></main></body></html>`;
  const { text } = extractHtml(html, 'https://news.example/2018/08/players-kneel');
  t.true(text.includes('protesting during the national anthem before the first full week'), text);
  t.true(text.includes("and the players' union said no one would be punished"), text);
  t.false(text.includes('Opens a video'));
  t.false(text.includes('Tags:'));
});

test('screen-reader text under the class names of WordPress, eBay, Amazon and others stays out of a product page', (t) => {
  const description = 'A brass desk lamp with a linen shade, a dimmer in its base and a cloth cord two metres long. ';
  const html = `<html><head><title>Brass desk lamp</title></head><body><main>
    <h1>Brass desk lamp</h1>
    <p class="price"><del>$80.00</del><span class="screen-reader-text">Original price was: $80.00.</span> <ins>$64.00</ins><span class="screen-reader-text">Current price is: $64.00.</span></p>
    <p>${description.repeat(3)}<a href="/shipping">Shipping details<span class="clipped"> - opens in a new window or tab</span></a></p>
    <p>Sold by Lamp House<span class="a-offscreen">Seller rating four and a half stars</span><span class="screenreader">Rated by buyers</span></p>
    <table><tr><th>Height</th><td>42 cm</td></tr><tr><th>Bulb</th><td>E27, up to 40 W</td></tr></table>
  </main></body></html>`;
  const { text } = extractHtml(html, 'https://shop.example/products/brass-desk-lamp');
  t.true(text.includes('$80.00 $64.00'), text);
  t.true(text.includes('Shipping details'), text);
  t.true(text.includes('Sold by Lamp House'), text);
  t.true(text.includes('42 cm'), text);
  for (const unshown of ['Original price was', 'Current price is', 'opens in a new window', 'Seller rating', 'Rated by buyers']) t.false(text.includes(unshown), unshown);
});

test('a microformats entry is the post, whatever taxonomy words its theme puts beside "hentry"', (t) => {
  // Sandbox-style themes class the post "hentry post author-<login> category-<slug>": read as a
  // byline's word, "author" took the whole post away once its comments outweighed it.
  const comment = (name: string) =>
    `<li class="comment"><div class="comment-author vcard"><span class="fn">${name}</span> wrote:</div>` +
    '<p>I remember the old reading room well, and I am glad to hear it will stay open on Sundays for the students who need it.</p></li>';
  const html =
    '<html><body><div id="header"><div id="blog-description">A blog about libraries and reading</div></div>' +
    '<div id="container"><div id="content">' +
    '<div id="post-12" class="hentry p1 post publish author-jane category-news y2012 m08 d17">' +
    `<h2 class="entry-title">The reading room stays open</h2><div class="entry-content"><p>${PARAGRAPHS[0]}</p><p>${PARAGRAPHS[1]}</p></div></div>` +
    `<div class="comments"><ol>${['Ann', 'Bob', 'Cleo', 'Dev', 'Eli', 'Fay'].map(comment).join('')}</ol></div>` +
    '</div></div></body></html>';
  const page = extractHtml(html, 'https://blog.example/2012/08/17/reading-room/');
  t.true(page.text.includes(PARAGRAPHS[0]!), page.text);
  t.true(page.text.includes(PARAGRAPHS[1]!));
  t.false(page.text.includes('old reading room'), 'the comments stay out');

  // The same post classed without the microformat is still read by its words: the rule is the class.
  const unmarked = extractHtml(html.replace('hentry ', ''), 'https://blog.example/2012/08/17/reading-room/');
  t.false(unmarked.text.includes(PARAGRAPHS[0]!));
});

test('an element the page marks as the article (itemprop articleBody, an Article itemtype) is never boilerplate by its class words', (t) => {
  // A share plugin named the body's wrapper after its buttons ("share-btns-container"); with more
  // prose in the comments under it, the word "share" took the whole story away.
  const comment = (name: string) =>
    `<li class="comment"><b>${name}</b><p>I take the tram every morning, and a line to the northern suburbs would save me half an hour each way, so I am glad.</p></li>`;
  const html = (bodyAttributes: string) =>
    '<html><body><article itemscope itemtype="https://schema.org/NewsArticle"><h1>Council approves tram extension</h1>' +
    `<div ${bodyAttributes} id="share-btns-container"><p>${PARAGRAPHS[0]!}</p><p>${PARAGRAPHS[1]!}</p></div></article>` +
    `<ol class="comments">${['Ann', 'Bob', 'Cleo', 'Dev', 'Eli'].map(comment).join('')}</ol></body></html>`;
  const page = extractHtml(html('itemprop="articleBody"'), 'https://news.example/2024/05/tram');
  t.true(page.text.includes(PARAGRAPHS[0]!), page.text);
  t.true(page.text.includes(PARAGRAPHS[1]!));
  t.false(page.text.includes('tram every morning'), 'the comments stay out');

  // The pre-clean itself: with the mark the body stays, without it the class words decide, as before.
  const bodyKept = (bodyAttributes: string) => {
    const document = parseDocument(html(bodyAttributes));
    removeBoilerplateElements(document);
    return (document.body?.textContent ?? '').includes(PARAGRAPHS[0]!);
  };
  t.true(bodyKept('itemprop="articleBody"'));
  t.false(bodyKept('class="text-wrapper"'));
});

/**
 * A story whose block Readability's first search drops as an unlikely candidate when it is classed
 * "extra" (so it searches again), and keeps at once when it is classed "story". `before` goes first
 * in the body.
 */
function retryPage(blockClass: string, before = ''): string {
  return `<html><head><title>Harbour notes</title><meta property="og:type" content="article"></head><body>${before}
    <div class="${blockClass}"><p>${PARAGRAPHS.join(' ')}</p><div>Pier<!-- -->\u00a0·\u00a0<!-- -->Quay</div></div></body></html>`;
}

test('a page that Readability searches again reads as it does at once: its retry starts from the page as the first search found it', (t) => {
  // Readability's copy of the page used to be markup, where a no-break space is written as a
  // character reference; parsing that again cut the separator's text into three nodes, which read
  // as three paragraphs.
  const retried = extractHtml(retryPage('extra'), 'https://coast.example/notes', { markdown: true });
  const atOnce = extractHtml(retryPage('story'), 'https://coast.example/notes', { markdown: true });
  t.regex(atOnce.text, /Pier\n\n\s*·\s*\n\nQuay$/);
  t.is(retried.text, atOnce.text);
  t.is(retried.markdown, atOnce.markdown);
});

test("a page whose body has 200,000 children is searched again as any other: the retry's copy is put back child by child", (t) => {
  // Spread into one call, that many children overflowed the stack, and the page fell back to its whole text.
  const crowd = '<!---->'.repeat(200_000);
  const retried = extractHtml(retryPage('extra', crowd), 'https://coast.example/notes');
  const atOnce = extractHtml(retryPage('story', crowd), 'https://coast.example/notes');
  t.regex(atOnce.text, /Pier\n\n\s*·\s*\n\nQuay$/);
  t.is(retried.text, atOnce.text);
});
