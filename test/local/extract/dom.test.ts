import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import test from 'ava';
import { Readability } from '@mozilla/readability';
import { ELEMENT_NODE, MAX_ELEMENT_DEPTH, mayHoldElement, normalizeSpace, normalizedLength, parseDocument, removeElementsByWholeText, separateCodeLines, type DomNode } from '../../../src/local/extract/dom.js';
import { measureText, repeatedSiblingGroups } from '../../../src/local/extract/structure.js';

// patches/linkedom+*.patch makes linkedom create a node's listener map on its first listener instead
// of in every node's constructor (the extraction benchmark's speed); events must work as before.
test('events on a parsed page still reach their listeners, and removing one that was never added is harmless', (t) => {
  const document = parseDocument('<html><body><div id="outer"><button id="inner">Go</button></div></body></html>') as unknown as {
    querySelector(selector: string): EventTargetLike;
    defaultView: { Event: new (type: string, init?: { bubbles?: boolean }) => unknown };
  };
  const outer = document.querySelector('#outer');
  const inner = document.querySelector('#inner');
  const { Event } = document.defaultView;
  const seen: string[] = [];
  const onInner = () => seen.push('inner');
  inner.removeEventListener('click', onInner);
  inner.addEventListener('click', onInner);
  outer.addEventListener('click', () => seen.push('outer'));
  inner.dispatchEvent(new Event('click', { bubbles: true }));
  t.deepEqual(seen, ['inner', 'outer']);
  inner.removeEventListener('click', onInner);
  inner.dispatchEvent(new Event('click', { bubbles: true }));
  t.deepEqual(seen, ['inner', 'outer', 'outer']);
});

test('the installed linkedom carries the patch: no listener map is made in a node constructor', (t) => {
  const require = createRequire(import.meta.url);
  const packageDirectory = require.resolve('linkedom/package.json').replace(/package\.json$/, '');
  for (const build of ['esm', 'cjs']) {
    const source = readFileSync(`${packageDirectory}${build}/interface/event-target.js`, 'utf8');
    const constructorBody = /constructor\(\) \{([^}]*)\}/.exec(source)?.[1] ?? '';
    t.false(constructorBody.includes('wm.set'), `${build}: run npm install (patch-package applies patches/)`);
    t.regex(source, /if \(!map\)\s*wm\.set\(this, map = new Map\)/);
  }
});

test('the installed htmlparser2 under linkedom carries the patch: its open tags are a push-and-pop stack', (t) => {
  const require = createRequire(import.meta.url);
  const linkedomDirectory = require.resolve('linkedom/package.json').replace(/package\.json$/, '');
  // Its package.json is not among the package's exports; its entry point is, in dist/commonjs.
  const parserPackage = createRequire(`${linkedomDirectory}package.json`).resolve('htmlparser2').replace(/dist[\\/]commonjs[\\/]index\.js$/, '');
  for (const build of ['esm', 'commonjs']) {
    const source = readFileSync(`${parserPackage}dist/${build}/Parser.js`, 'utf8');
    t.false(source.includes('this.stack.unshift('), `${build}: run npm install (patch-package applies patches/)`);
    t.regex(source, /this\.stack\.push\(name\)/);
    t.regex(source, /this\.stack\.lastIndexOf\(name\)/);
  }
});

test('tags the parser closes by implication close as before: paragraphs, list items, table rows, end tags of outer elements, the end of the page', (t) => {
  const body = (html: string) => parseDocument(`<html><body>${html}</body></html>`).body!.innerHTML;
  t.is(body('<p>one<p>two<div>three</div>'), '<p>one</p><p>two</p><div>three</div>');
  t.is(body('<ul><li>a<li>b</ul><p>after'), '<ul><li>a</li><li>b</li></ul><p>after</p>');
  t.is(body('<table><tr><td>1<td>2<tr><td>3</table>'), '<table><tr><td>1</td><td>2</td></tr><tr><td>3</td></tr></table>');
  t.is(body('<div><span><b>x</div>y'), '<div><span><b>x</b></span></div>y', 'an outer end tag closes the tags open inside it');
  t.is(body('<div><div>inner</div>outer</div>after'), '<div><div>inner</div>outer</div>after', 'an end tag closes the innermost open element of its name');
  t.is(body('<div><em>never closed'), '<div><em>never closed</em></div>');
  // In SVG a self-closing tag closes itself; outside it, it does not.
  t.is(body('<svg><circle/><rect/></svg><span/>x'), '<svg><circle /><rect /></svg><span>x</span>');
});

test('after thousands of nested tables the parser closes every one and the rest of the page lands in <body>', (t) => {
  const depth = 3_000;
  const document = parseDocument(`<html><body>${'<table><tr><td>'.repeat(depth)}deep${'</td></tr></table>'.repeat(depth)}<p>after</p></body></html>`);
  const after = [...document.querySelectorAll('p')].find((element) => element.textContent === 'after');
  t.is(after?.parentElement?.localName, 'body');
  t.true(document.body!.textContent!.includes('deep'));
});

interface EventTargetLike {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
  dispatchEvent(event: unknown): boolean;
}

test('attribute names written in upper case are read as HTML reads them, in lower case', (t) => {
  const document = parseDocument('<html><body><DIV CLASS="nav" ID="menu"><A HREF="/next">Next</A></DIV></body></html>');
  const division = document.querySelector('div')!;
  t.is(division.className, 'nav');
  t.is(division.id, 'menu');
  t.is(document.querySelector('a[href]')?.getAttribute('href'), '/next');
  t.truthy(document.querySelector('.nav'));
});

function nested(depth: number, open: (level: number) => string, close: (level: number) => string, inner: string): string {
  const levels = Array.from({ length: depth }, (_, level) => level);
  return `<html><body>${levels.map(open).join('')}${inner}${levels.reverse().map(close).join('')}</body></html>`;
}

function depthOf(document: ReturnType<typeof parseDocument>): number {
  let deepest = 0;
  // Levels below <html>, as capNestingDepth counts them.
  const pending: Array<[DomNode, number]> = [[document.documentElement, 0]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop()!;
    deepest = Math.max(deepest, depth);
    for (let child = node.firstChild; child; child = child.nextSibling) if (child.nodeType === ELEMENT_NODE) pending.push([child, depth + 1]);
  }
  return deepest;
}

test('a page nested deeper than MAX_ELEMENT_DEPTH keeps its text, in order, below that depth', (t) => {
  const html = nested(
    20_000,
    (level) => (level % 2 === 0 ? `<div>block ${level}` : `<span>inline ${level} `),
    (level) => (level % 2 === 0 ? '</div>' : '</span>'),
    '<p>the end</p><script>not text</script>',
  );
  const document = parseDocument(html);
  t.is(depthOf(document), MAX_ELEMENT_DEPTH);
  const text = document.body!.textContent!;
  t.true(text.endsWith('\nblock 19998inline 19999 \nthe end\n'), 'a block element starts and ends a line, an inline one neither');
  t.false(text.includes('not text'));
  t.true(text.indexOf('block 200') < text.indexOf('block 19998'));
  t.true(text.includes('block 0inline 1 block 2'), 'the levels above the cap keep their elements');
});

test('a page within MAX_ELEMENT_DEPTH keeps every element', (t) => {
  const html = nested(MAX_ELEMENT_DEPTH - 2, () => '<div>', () => '</div>', '<p>leaf</p>');
  const document = parseDocument(html);
  t.is(document.querySelectorAll('div').length, MAX_ELEMENT_DEPTH - 2);
  t.is(document.querySelector('p')?.textContent, 'leaf');
});

// Pages saved from a live DOM break the document's outline in ways a browser's parser repairs and
// linkedom's does not; its document.body was then a new, empty element.
const ARTICLE = '<h1>Tide tables</h1><p>The tide turns twice a day, a little later each day.</p>';

test('a stylesheet before <head>, a script before <body>, a second <body> and a dialog after </body> all land where a browser puts them', (t) => {
  const html = [
    '<!doctype html><html lang="nb" class="js">',
    '<link rel="stylesheet" href="/extra.css">',
    '<head><title>Tides</title><meta charset="utf-8"></head>',
    '<script>window.ready = true</script>',
    `<body class="page">${ARTICLE}</body>`,
    '<body><p>Second body.</p></body>',
    '<div role="dialog">Cookies?</div>',
    '</html>',
  ].join('\n');
  const document = parseDocument(html);
  const root = document.documentElement;
  t.is(root.localName, 'html');
  t.is(root.getAttribute('lang'), 'nb');
  t.deepEqual([...root.children].map((child) => child.localName), ['head', 'body']);
  t.deepEqual([...document.head!.children].map((child) => child.localName), ['link', 'title', 'meta', 'script']);
  t.is(document.title, 'Tides');
  t.is(document.body!.getAttribute('class'), 'page');
  t.deepEqual([...document.body!.children].map((child) => child.localName), ['h1', 'p', 'p', 'div']);
  t.is(document.querySelectorAll('body').length, 1);
});

test('markup before <html>, and a fragment with no <html> at all, become the body', (t) => {
  const before = parseDocument(`<div id="flag">Report this page</div><html><head><title>Tides</title></head><body>${ARTICLE}</body></html>`);
  t.deepEqual([...before.body!.children].map((child) => child.id || child.localName), ['flag', 'h1', 'p']);
  t.is(before.title, 'Tides');

  const fragment = parseDocument(`<style>p { margin: 0 }</style>${ARTICLE}`);
  t.is(fragment.documentElement.localName, 'html');
  t.is(fragment.head!.firstElementChild?.localName, 'style');
  t.deepEqual([...fragment.body!.children].map((child) => child.localName), ['h1', 'p']);
});

test('markup after </html>, a second document that server-side includes appended among it, goes into the body; a comment there does not', (t) => {
  const included = `<script>function popUp() {}</script>\n<!DOCTYPE html>\n<html><head><title>Tides</title></head><body><p id="story">High water at noon.</p></body></html>`;
  const document = parseDocument(`<!doctype html><html><head></head><body><div id="banner">Weather: clear</div></body></html>\n${included}`);
  t.deepEqual([...document.documentElement.children].map((child) => child.localName), ['head', 'body']);
  t.deepEqual([...document.body!.children].map((child) => child.id || child.localName), ['banner', 'script', 'story']);
  t.is(document.title, 'Tides');

  const withComment = parseDocument(`<!doctype html><html><head><title>Tides</title></head><body>${ARTICLE}</body></html>\n<!-- served in 12 ms -->\n`);
  t.deepEqual([...withComment.body!.children].map((child) => child.localName), ['h1', 'p']);
  t.is(withComment.documentElement.nextSibling?.nodeType, 3, 'the page is left as parsed: the comment and the line break stay after </html>');
});

test('a well-formed page is left as parsed', (t) => {
  const document = parseDocument(`<html><head><title>Tides</title></head><body>${ARTICLE}</body></html>`);
  const body = document.body!;
  t.is(document.body, body, 'the same element on every read, not a new one');
  t.deepEqual([...body.children].map((child) => child.localName), ['h1', 'p']);
});

test('thousands of nested <html> or <head> start tags are placed without overflowing the stack, and the text lands in the body', (t) => {
  for (const tag of ['html', 'head']) {
    const document = parseDocument(`${`<${tag} class="level">`.repeat(50_000)}<p>deep text</p>`);
    t.deepEqual([...document.documentElement.children].map((child) => child.localName), ['head', 'body'], tag);
    t.is(document.body!.textContent, 'deep text', tag);
  }
});

test("a <title> whose end tag was lost ends at the markup after it, so the page keeps its body; a long title that is whole stays", (t) => {
  const story = '<p>' + 'The council approved the new bridge after a long debate about its cost and its route. '.repeat(20) + '</p>';
  // Bytes dropped from a saved page: "</title><script ..." became "</titavaScript" ...
  const truncated = `<html><head><title>Council approves bridge</titavaScript" src="/menu.js"></script><link rel="stylesheet" href="/site.css"></head><body><h1>Council approves bridge</h1>${story}</body></html>`;
  const document = parseDocument(truncated);
  t.is(document.querySelector('title')?.textContent, 'Council approves bridge');
  t.regex(document.body?.textContent ?? '', /The council approved the new bridge/);
  t.is(document.body?.querySelector('h1')?.textContent, 'Council approves bridge');

  // A title can be long; without markup in it, or with the page's body intact, it is not swallowing anything.
  const longTitle = 'Minutes of the meeting, '.repeat(60);
  t.is(parseDocument(`<html><head><title>${longTitle}</title></head><body>${story}</body></html>`).querySelector('title')?.textContent, longTitle);
  const markupTitle = `${longTitle}<b>bold</b>`;
  t.is(parseDocument(`<html><head><title>${markupTitle}</title></head><body>${story}</body></html>`).querySelector('title')?.textContent, markupTitle);
});

test('table cells written without a <tr> sit in the row a browser implies; consecutive cells share it', (t) => {
  const document = parseDocument('<html><body><table><td>a</td> <td>b</td><tr><td>c</td></tr><td>d</td><tbody><th>e</th></tbody></table></body></html>');
  const rows = [...document.querySelectorAll('tr')].map((row) => [...row.children].map((cell) => cell.textContent).join(','));
  t.deepEqual(rows, ['a,b', 'c', 'd', 'e']);
  t.is(document.querySelectorAll('table > td, tbody > th').length, 0);
});

// The passes that concern one element are skipped when the page has none (the table pass by its
// markup, the code pass by the parsed elements: html.test); tag names are case-insensitive, so
// upper-case markup must not read as none.
test('a pass for one element still runs on upper-case markup: stray cells get their row, highlighted lines their newlines', (t) => {
  const tables = parseDocument('<HTML><BODY><TABLE><TD>a</TD><TD>b</TD></TABLE></BODY></HTML>');
  t.deepEqual([...tables.querySelectorAll('tr')].map((row) => row.textContent), ['ab']);
  const code = parseDocument('<HTML><BODY><PRE><CODE><SPAN CLASS="line">one</SPAN><SPAN CLASS="line">two</SPAN></CODE></PRE></BODY></HTML>');
  separateCodeLines(code);
  t.is(code.querySelector('code')?.textContent, 'one\ntwo');
});

test('mayHoldElement finds a start tag by its whole name, in any case, and only a start tag', (t) => {
  t.true(mayHoldElement('<p>x</p><Table class="a">', 'table'));
  t.true(mayHoldElement('<pre>', 'pre'));
  t.true(mayHoldElement('<pre\n class="x">', 'pre'));
  t.true(mayHoldElement('<table/>', 'table'));
  t.false(mayHoldElement('<preview>a</preview><p>pre</p></pre>', 'pre'));
  t.false(mayHoldElement('<tablet>', 'table'));
});

test('removeElementsByWholeText judges an element by its whole text, space-normalised, up to the limit and not past it', (t) => {
  const document = parseDocument(`<html><body><main>
    <p id="exact"><span>  Learn </span>\n\n\t<b>more</b>  </p>
    <p id="spaced"> Learn\u00a0\u00a0more\u3000</p>
    <p id="nested"><span><span><span>Learn</span></span></span> <i>more</i></p>
    <p id="longer">Learn more!</p>
    <p id="solid">ReadMore!</p>
    <div id="wrapper"><p>${'A paragraph of the article that goes on for a while. '.repeat(40)}</p><a href="/x">Learn more</a></div>
  </main></body></html>`);
  const main = document.querySelector('main')!;
  // "Learn more" is 10 characters: at a limit of 10 it is a label; "Learn more!" is 11.
  removeElementsByWholeText(main, 'p, div, a', /^learn more!?$/i, 10);
  for (const id of ['exact', 'spaced', 'nested']) t.is(document.querySelector(`#${id}`), null, id);
  t.truthy(document.querySelector('#longer'));
  t.truthy(document.querySelector('#wrapper'));
  t.is(document.querySelector('#wrapper a'), null);
  removeElementsByWholeText(main, 'p', /^learn more!$/i, 11);
  t.is(document.querySelector('#longer'), null);
  // Nine characters, none of them space, at a limit of nine.
  removeElementsByWholeText(main, 'p', /^readmore!$/i, 9);
  t.is(document.querySelector('#solid'), null);
});

test('removeElementsByWholeText leaves a template\'s content alone, as querySelectorAll does, and judges a label inside a removed one alike', (t) => {
  const document = parseDocument(`<html><body><main>
    <template><p id="kept">Learn more</p></template>
    <div id="outer"><p id="inner">Learn more</p></div>
    <p id="after">Learn more</p>
    <div id="long">${'Words of the article itself. '.repeat(10)}<template><p>Learn more</p></template></div>
  </main></body></html>`);
  const main = document.querySelector('main')!;
  const inner = document.querySelector('#inner')!;
  removeElementsByWholeText(main, 'p, div', /^learn more$/i, 10);
  t.is(document.querySelector('#outer'), null);
  t.is(document.querySelector('#after'), null);
  // The inner label went with its holder, and was judged as alone too: its own parent is gone from it.
  t.is(inner.parentNode, null);
  t.truthy(document.querySelector('#long'));
  t.true(main.innerHTML.includes('id="kept"'));
});

test('normalizedLength is the length of the space-normalised text, for every kind of white space', (t) => {
  const samples = [
    '', 'x', ' x ', '  Learn \n\n\t more  ', 'a\u00a0\u00a0b', ' a\u2003b\u3000 c\ufeff', 'a\u000bb\u000cc', 'a\u1680b\u2028c\u202f d\u205f',
    // U+0085 (next line) and U+200B (zero-width space) are not white space to \s, nor here.
    'a\u0085b', 'a\u200bb', '\t\n\r ', 'Ünïcödé  wörds\u00a0and 中文 字符',
  ];
  for (const sample of samples) t.is(normalizedLength(sample), normalizeSpace(sample).length, JSON.stringify(sample));
  t.is(normalizedLength(null), 0);
  t.is(normalizedLength(undefined), 0);
});

test('repeatedSiblingGroups finds the groups under every element, biggest first and in document order at equal size, none in a template', (t) => {
  const document = parseDocument(`<html><body><main>
    <ul id="first"><li>one item</li><li>two item</li></ul>
    <template><div class="card">alpha</div><div class="card">bravo</div></template>
    <section><ul id="second"><li>six item</li><li>ten item</li></ul></section>
    <ol id="bigger"><li>a longer list item</li><li>another longer item</li></ol>
  </main></body></html>`);
  const main = document.querySelector('main')!;
  const groups = repeatedSiblingGroups(main, measureText(main), 2);
  // Equal text keeps document order; the bigger group comes first.
  t.deepEqual(
    groups.map((group) => group.parent.id || group.parent.localName),
    ['bigger', 'first', 'second'],
  );
});

test('the installed Readability carries the patch: a node is read for its byline only when its markup names one', (t) => {
  const require = createRequire(import.meta.url);
  const source = readFileSync(require.resolve('@mozilla/readability/Readability.js'), 'utf8');
  const byline = /_isValidByline\(node, matchString\) \{([\s\S]*?)\n {2}\},/.exec(source)?.[1] ?? '';
  t.true(byline.indexOf('return false') >= 0 && byline.indexOf('return false') < byline.indexOf('textContent'), 'run npm install (patch-package applies patches/)');
  t.regex(source, /if \(this\._debug\) \{\s*\/\/[^\n]*\n\s*this\.log\("Grabbed: "/);
  t.regex(source, /var style = node\.hasAttribute\("style"\) \? node\.style : null;/);
  t.regex(source, /var innerText = textOfNode\(\);/);
  t.regex(source, /!this\._hasTextContent\(node\) &&/);
});

test("Readability's test for an element without content (patched to stop at the first character) answers as textContent.trim() did", (t) => {
  const document = parseDocument(`<html><body>
    <div id="blank"> \n\t<br> <hr>\u00a0\u3000</div>
    <div id="deep"><span> </span><span><b>\n</b><i> x</i></span><br></div>
    <div id="spaces-only-elements"><span> </span><p>\u2003</p></div>
    <div id="zero-width">\u200b<br></div>
    <div id="comment"><!-- a comment's text is no content --><br></div>
  </body></html>`);
  const reader = new Readability(document as never) as unknown as { _isElementWithoutContent(node: unknown): boolean };
  const without = (id: string) => reader._isElementWithoutContent(document.querySelector(`#${id}`));
  t.true(without('blank'));
  t.false(without('deep'));
  // White space alone in elements that are not <br> or <hr>: no text, but other children.
  t.false(without('spaces-only-elements'));
  // U+200B is no white space to trim().
  t.false(without('zero-width'));
  t.true(without('comment'));
});

test("Readability's conditional clean, which reads a node's text once (patched), still weighs links and commas", (t) => {
  const prose = 'The council met again on Tuesday and agreed the budget for the coming year after a long debate. '.repeat(4);
  const html = `<html><head><title>Council agrees budget</title></head><body><article>
    <p>Opening. ${prose}</p>
    <div><p>Linked. <a href="/fares">Tram fares rise in spring</a> and <a href="/lanes">bus lanes widened on Main Street</a></p></div>
    <div><p>Counted. <a href="/n">One, two, three, four, five, six</a>, seven, eight, nine, ten, eleven.</p></div>
    <div><p>Closing. ${prose}</p></div>
  </article></body></html>`;
  const text = new Readability(parseDocument(html) as never).parse()?.textContent ?? '';
  for (const kept of ['Opening.', 'Closing.']) t.true(text.includes(kept), kept);
  t.false(text.includes('Linked.'), 'a block of mostly link text is cleaned');
  t.true(text.includes('Counted.'), 'as linky, but ten commas or more keep it');
});

test("Readability, patched, still leaves out what a node's inline style or hidden attribute hides", (t) => {
  const paragraph = (words: string) => `<p>${words} ${'The council met again on Tuesday and agreed the budget for the coming year, after a long debate. '.repeat(4)}</p>`;
  const html = `<html><head><title>Council agrees budget</title></head><body><article>
    ${paragraph('Visible first.')}
    <div style="display: none">${paragraph('Hidden by display.')}</div>
    <div style="color: red; visibility:hidden">${paragraph('Hidden by visibility.')}</div>
    <div hidden>${paragraph('Hidden by attribute.')}</div>
    <div style="color: red">${paragraph('Shown in red.')}</div>
    ${paragraph('Visible last.')}
  </article></body></html>`;
  const text = new Readability(parseDocument(html) as never).parse()?.textContent ?? '';
  for (const shown of ['Visible first.', 'Shown in red.', 'Visible last.']) t.true(text.includes(shown), shown);
  for (const hidden of ['Hidden by display.', 'Hidden by visibility.', 'Hidden by attribute.']) t.false(text.includes(hidden), hidden);
});
