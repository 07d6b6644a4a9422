import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import test from 'ava';
import { compile, convert } from 'html-to-text';
import { parseDocument, type DomElement } from '../../../src/local/extract/dom.js';
import { asParsedTree, type ParsedNode } from '../../../src/local/extract/parsed-tree.js';

// The htmlparser2 that html-to-text parses with, wherever the install put it.
const require = createRequire(import.meta.url);
const htmlToTextRequire = createRequire(require.resolve('html-to-text'));
const htmlparser2 = (await import(pathToFileURL(htmlToTextRequire.resolve('htmlparser2')).href)) as {
  parseDocument(html: string): { children: HtmlparserNode[] };
};

interface HtmlparserNode {
  type: string;
  name?: string;
  attribs?: Record<string, string>;
  data?: string;
  children?: HtmlparserNode[];
}

/** What html-to-text reads of a node: its type, name, attributes, text and children; a comment's text it skips. */
function shape(node: HtmlparserNode | ParsedNode): unknown {
  if (node.type === 'text') return { type: 'text', data: (node as { data: string }).data };
  if (node.type === 'comment') return { type: 'comment' };
  const element = node as { type: string; name: string; attribs: Record<string, string>; children: (HtmlparserNode | ParsedNode)[] };
  return { type: element.type, name: element.name, attribs: { ...element.attribs }, children: element.children.map(shape) };
}

const TEXT_OPTIONS = { wordwrap: false as const };
const treeToText = compile(TEXT_OPTIONS) as unknown as (input: unknown) => string;

function bodyOf(html: string): DomElement {
  return parseDocument(`<!doctype html><html><head><title>t</title></head><body>${html}</body></html>`).body!;
}

/** The tree and html-to-text's text of it are what parsing the element's serialisation gives. */
function assertSameAsReparsed(t: { deepEqual(a: unknown, b: unknown, message?: string): void; is(a: unknown, b: unknown, message?: string): void }, element: DomElement): void {
  const html = element.innerHTML;
  t.deepEqual(asParsedTree(element).children.map(shape), htmlparser2.parseDocument(html).children.map(shape), 'tree');
  t.is(treeToText(asParsedTree(element)), convert(html, TEXT_OPTIONS), 'text');
}

test('a parsed page reads as the parse of its serialisation: comments between texts, entities, scripts, SVG names', (t) => {
  const body = bodyOf(
    [
      '<p>One<!-- a note -->Two &amp; <b>three</b>&nbsp;four &lt;not a tag&gt;</p>',
      '<div data-X="1" CLASS="Card">  <span>a</span><span>b</span>\n  </div>',
      '<script>if (a < b) run("</p>")</script><style>p > b { color: red }</style>',
      '<svg viewBox="0 0 1 1"><clipPath id="c"><rect/></clipPath><text>label</text></svg>',
      '<table><tr><td>1</td><td>2</td></tr></table><ul><li>x<li>y</ul><br><img alt="pic" src="a.png">',
      '<template><p>later</p></template><noscript><p>no script</p></noscript>',
    ].join(''),
  );
  assertSameAsReparsed(t, body);
});

// Serialised and parsed again, a textarea's markup-like text became elements; the tree keeps the
// DOM's text, which is what a browser shows in the box.
test('a textarea holds its text as written, markup-like or not', (t) => {
  const body = bodyOf('<textarea>keep <b>this</b> as text</textarea>');
  const textarea = asParsedTree(body).children[0] as { name: string; children: unknown[] };
  t.is(textarea.name, 'textarea');
  t.deepEqual(textarea.children.map((child) => shape(child as ParsedNode)), [{ type: 'text', data: 'keep <b>this</b> as text' }]);
});

test('texts the extractor adds beside each other are one node, and an empty one is none, as after a parse', (t) => {
  const body = bodyOf('<p id="p">start</p>');
  const paragraph = body.querySelector('#p')!;
  const document = body.ownerDocument;
  paragraph.appendChild(document.createTextNode(' middle'));
  paragraph.appendChild(document.createTextNode(''));
  paragraph.appendChild(document.createTextNode(' end'));
  const added = document.createElement('em');
  added.setAttribute('title', 'a "quoted" <value>');
  added.appendChild(document.createTextNode('x'));
  paragraph.appendChild(added);
  assertSameAsReparsed(t, body);
  const parsed = asParsedTree(body).children[0] as { children: { type: string; data?: string }[] };
  t.deepEqual(parsed.children[0], { type: 'text', data: 'start middle end', parent: parsed });
});

test('the patched html-to-text reads a tree as it reads the HTML it came from', (t) => {
  const body = bodyOf('<h2>Title</h2><p>Para with <a href="/x">a link</a>.</p><ol><li>one</li><li>two</li></ol><pre>code\n  indented</pre>');
  const options = { wordwrap: false as const, selectors: [{ selector: 'a', options: { ignoreHref: true } }] };
  t.is((compile(options) as unknown as (input: unknown) => string)(asParsedTree(body)), convert(body.innerHTML, options));
  t.true(convert(body.innerHTML, options).includes('1. one'));
});
