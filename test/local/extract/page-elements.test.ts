import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import test from 'ava';
import { parseDocument } from '../../../src/local/extract/dom.js';
import { PageElements, within } from '../../../src/local/extract/page-elements.js';

const PAGE = `<!doctype html><html lang="en"><head><title>Trail lamp</title>
  <meta property="og:type" content="product"><META NAME="Author" content="Ada"><link rel="canonical" href="/lamp">
  <script type="application/ld+json">{"@type":"Product"}</script></head>
  <body><header><h1>Shop</h1><PRE>header code</PRE></header>
  <main itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Trail lamp</h1>
    <span class="Price-Now" itemprop="price" content="19.00">$19.00</span>
    <div class="add-to-cart"><button class="Buy">Add</button></div>
    <time datetime="2024-05-01">May 1</time><time>no datetime</time>
    <a rel="Author" href="/ada">Ada</a><a href="/other">Other</a>
    <svg><linearGradient id="g"></linearGradient><title>Icon</title></svg>
    <template><h1>Not shown</h1><span class="price">$0</span></template>
    <pre>one</pre><pre>two</pre><code>x</code>
    <div itemscope itemtype="https://schema.org/Offer"><meta itemprop="priceCurrency" content="USD"></div>
  </main><footer><p>Footer</p></footer></body></html>`;

const SELECTORS = [
  'meta, [itemprop]',
  '[itemscope][itemtype]',
  '[itemprop="price" i], [class*="price" i], [id*="price" i]',
  'button, form, input[type="submit" i], a[class], div[class]',
  'pre, code, .highlight, .codehilite',
];

test("a page's elements answer as querySelectorAll does: document order, any case, no template content", (t) => {
  const document = parseDocument(PAGE);
  const elements = new PageElements(document);
  for (const selectors of SELECTORS) t.deepEqual(elements.matching(selectors), [...document.querySelectorAll(selectors)], selectors);
  for (const tag of ['h1', 'meta', 'link', 'title', 'script', 'pre', 'time', 'a', 'span', 'lineargradient', 'template']) {
    t.deepEqual(elements.named(tag), [...document.querySelectorAll(tag)], tag);
  }
  t.is(elements.named('h1').length, 2, 'the template\'s heading is not among them');
  t.is(elements.named('lineargradient').length, 1, "an SVG element's camel-cased name is found in lower case");
  t.deepEqual(elements.namedMatching('time', 'time[datetime]'), [...document.querySelectorAll('time[datetime]')]);
  t.deepEqual(elements.namedMatching('a', 'a[rel="author" i]'), [...document.querySelectorAll('a[rel="author" i]')]);
  t.is(elements.namedMatching('a', 'a[rel="author" i]').length, 1);
  const body = document.body!;
  t.deepEqual(within(body, elements.named('pre')), [...body.querySelectorAll('pre')]);
  t.deepEqual(within(body, elements.matching('pre, code')), [...body.querySelectorAll('pre, code')]);
  t.is(elements.named('nothing-of-the-kind').length, 0);
});

test('the installed linkedom carries the patch: compiled selectors are kept by mode, then by their text', (t) => {
  const require = createRequire(import.meta.url);
  const packageDirectory = require.resolve('linkedom/package.json').replace(/package\.json$/, '');
  for (const build of ['esm', 'cjs']) {
    const source = readFileSync(`${packageDirectory}${build}/shared/matches.js`, 'utf8');
    t.regex(source, /const byMode = compiledByMode\[/, `${build}: run npm install (patch-package applies patches/)`);
  }
});
