/**
 * The main content as markdown: headings, lists, links, emphasis, code blocks and tables, through
 * turndown and its GitHub-flavoured-markdown plugin (tables, strikethrough).
 */
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
import { httpAddress } from '../fetch/url.js';
import { parseDocument, type DomDocument, type DomElement } from './dom.js';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_', hr: '---' });
turndown.use(gfm);

/** What the rules read of turndown's DOM nodes (its own parser's, not linkedom's). */
interface MarkupNode {
  nodeType: number;
  nodeName: string;
  nodeValue: string | null;
  firstChild: MarkupNode | null;
  nextSibling: MarkupNode | null;
  parentNode: MarkupNode | null;
  childNodes: ArrayLike<MarkupNode>;
  getAttribute?(name: string): string | null;
}

turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'button', 'select', 'input', 'textarea']);
// Images carry no text in the extracted content, and their addresses would be noise to a reader.
// (turndown.remove does not override turndown's own image rule; a rule of ours does.)
turndown.addRule('image', { filter: 'img', replacement: () => '' });

/**
 * The address the content's relative links resolve against. A module variable rather than an
 * argument, because turndown's rules see only the node; htmlToMarkdown sets it around its one
 * synchronous conversion.
 */
let linkBase: URL | null = null;
/** Links a reader can follow; a javascript: or data: link keeps only its words. */
const FOLLOWABLE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

/**
 * A link's destination: absolute (a relative one means nothing once the text leaves its page), with
 * parentheses escaped. Null when it leads nowhere a reader can go.
 */
function linkDestination(href: string): string | null {
  // An empty address is the page itself.
  if (!href.trim()) return null;
  let resolved: URL;
  try {
    resolved = new URL(href, linkBase ?? undefined);
  } catch {
    // Relative, and no web address to resolve it against: it stays as written.
    return linkBase === null && !/^[a-z][a-z0-9+.-]*:/i.test(href) ? escapeDestination(href.trim()) : null;
  }
  return FOLLOWABLE_PROTOCOLS.has(resolved.protocol) ? escapeDestination(resolved.href) : null;
}

function escapeDestination(destination: string): string {
  const escaped = destination.replace(/([()<>])/g, '\\$1');
  return /\s/.test(escaped) ? `<${escaped}>` : escaped;
}

/** Content that markdown must keep on one line (a heading, a table cell): its lines joined by a space. */
function onOneLine(content: string): string {
  return content.replace(/\s*\n\s*/g, ' ').trim();
}

/** An ATX heading is one line: a <br> in a heading ("Two<br>lines") would end it halfway. */
turndown.addRule('heading', {
  filter: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'],
  replacement: (content, node) => {
    const text = onOneLine(content);
    return text ? `\n\n${'#'.repeat(Number(node.nodeName.charAt(1)))} ${text}\n\n` : '';
  },
});

/** A line of text, its heading marker apart: not a fence, a table row, a quote or a list item's marker. */
const PLAIN_LINE = /^([ \t]*(?:#{1,6} )?)(?![`~|>]|[-+*] |\d{1,9}[.)] )(\S.*)$/;
const FENCE = /^[ \t]*(?:`{3,}|~{3,})/;

/** The block's markdown with its first plain line, outside code fences, as the link's text. */
function linkFirstPlainLine(content: string, destination: string): string {
  const lines = content.split('\n');
  let inFence = false;
  for (const [index, line] of lines.entries()) {
    if (FENCE.test(line)) inFence = !inFence;
    const plain = inFence ? null : PLAIN_LINE.exec(line);
    if (!plain) continue;
    lines[index] = `${plain[1]}[${plain[2]}](${destination})`;
    return lines.join('\n');
  }
  return content;
}

turndown.addRule('link', {
  filter: (node) => node.nodeName === 'A' && node.getAttribute('href') !== null,
  replacement: (content, node) => {
    // An anchor around a block is split by the parser, and leaves an empty copy of itself behind.
    if (!content.trim()) return '';
    const destination = linkDestination((node as unknown as MarkupNode).getAttribute?.('href') ?? '');
    if (destination === null) return content;
    // A link around blocks (a card's picture, heading and text) cannot wrap them: markdown's link
    // text is inline, and "[" and "](…)" on lines of their own read as text. The link goes on the
    // first line of text instead, after its heading marker (not on a code fence, a table row, a
    // quote or a list item's marker).
    if (content.includes('\n')) return linkFirstPlainLine(content, destination);
    return `[${content}](${destination})`;
  },
});

/**
 * Every <pre> is a fenced code block. turndown fences only a <pre> whose first child is a <code>, so a
 * Pygments or Sphinx block (<div class="highlight"><pre><span>…) or a bare <pre> became a paragraph,
 * its line breaks lost to a markdown reader.
 */
turndown.addRule('codeBlock', {
  filter: 'pre',
  replacement: (_content, node) => {
    const pre = node as unknown as MarkupNode;
    const code = preformattedText(pre).replace(/\n+$/, '');
    if (!code.trim()) return '';
    // A reduce, not Math.max(...): a hostile page can hold more fence lines than a call has arguments.
    const longestFence = [...code.matchAll(/^`{3,}/gm)].reduce((longest, match) => Math.max(longest, match[0].length), 0);
    const fence = '`'.repeat(Math.max(3, longestFence + 1));
    return `\n\n${fence}${codeLanguage(pre)}\n${code}\n${fence}\n\n`;
  },
});

/** The text of a <pre> as it shows: a <br> is a line break (textContent would drop it). */
function preformattedText(node: MarkupNode): string {
  let text = '';
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 3) text += child.nodeValue ?? '';
    else if (child.nodeName === 'BR') text += '\n';
    else if (child.nodeType === 1) text += preformattedText(child);
  }
  return text;
}

/** "language-python" or "lang-js" on the block or its code element, "highlight-python" on a Sphinx wrapper. */
const LANGUAGE_CLASS = /(?:^|\s)(?:language|lang|highlight|highlight-source)-([A-Za-z0-9_+#.-]+)/;
const NO_LANGUAGE = new Set(['none', 'default', 'text', 'plaintext', 'plain', 'nohighlight']);
/**
 * Where the extractor keeps a block's language: Readability strips class names, and with them the
 * language they name, before the content reaches turndown.
 */
export const CODE_LANGUAGE_ATTRIBUTE = 'data-language';

/** The language named by the classes of a code block, its <code>, then its wrappers, nearest first; '' for none. */
export function languageOfCodeClasses(classNames: ReadonlyArray<string | null | undefined>): string {
  for (const className of classNames) {
    const language = LANGUAGE_CLASS.exec(className ?? '')?.[1];
    if (language) return NO_LANGUAGE.has(language.toLowerCase()) ? '' : language;
  }
  return '';
}

/** A language name as a fence's info string may carry it: a page can set the attribute itself, to anything. */
const LANGUAGE_NAME = /^[A-Za-z0-9_+#.-]{1,40}$/;

function codeLanguage(pre: MarkupNode): string {
  const labelled = pre.getAttribute?.(CODE_LANGUAGE_ATTRIBUTE)?.trim();
  if (labelled && LANGUAGE_NAME.test(labelled)) return NO_LANGUAGE.has(labelled.toLowerCase()) ? '' : labelled;
  const code = pre.firstChild?.nodeName === 'CODE' ? pre.firstChild : null;
  return languageOfCodeClasses([code, pre, pre.parentNode, pre.parentNode?.parentNode].map((element) => element?.getAttribute?.('class')));
}

/**
 * A GFM table row is one line, and a pipe in a cell ends the cell: the plugin kept both as they came,
 * so a cell of two paragraphs broke the table and "a | b" made two cells. Lines join with a space and
 * pipes are escaped.
 */
turndown.addRule('tableCell', {
  filter: ['th', 'td'],
  replacement: (content, node) => {
    const cell = node as unknown as MarkupNode;
    const text = onOneLine(content).replaceAll('|', '\\|');
    const isFirst = !cell.parentNode || Array.from(cell.parentNode.childNodes).find((child) => child.nodeType === 1) === cell;
    return `${isFirst ? '| ' : ' '}${text} |`;
  },
});
/**
 * turndown escapes every "_" of the text, so an identifier in prose (`max_characters`) reads
 * `max\_characters`. An underscore between two letters or digits never opens or closes emphasis in
 * CommonMark, so there it is left as it is; elsewhere ("_private", "a _b_ c") the escape stays.
 */
const escapeMarkdown = turndown.escape.bind(turndown);
turndown.escape = (text: string) => markLineStartEscape(text, escapeMarkdown(text).replace(/(?<=[\p{L}\p{N}])\\_(?=[\p{L}\p{N}])/gu, '_'));

/**
 * turndown also escapes a block marker ("-", "+ ", "#", ">", "=", "~~~", "1. ") at the start of every
 * text node, although a text node often starts mid-line, after a link or emphasis: "[a](/x) \- b".
 * Such an escape is needed only where the marker ends up at the start of a line, and only the whole
 * output tells that. So the escape's backslash is first written as a NUL, which an HTML parser never
 * leaves in text (and `htmlToMarkdown` removes from its input), and `settleLineStartEscapes` turns it
 * back into a backslash at the start of a line (after indentation, quote and list markers) and drops
 * it elsewhere.
 */
const LINE_START_ESCAPE = '\u0000';
const LINE_START_MARKER = /^(?:-|\+ |=|#{1,6} |~~~|>)/;
const NUMBERED_MARKER = /^\d+(?=\. )/;

/** The mark goes before the marker; a number's escape goes after its digits (2024\. ). */
function markLineStartEscape(text: string, escaped: string): string {
  if (LINE_START_MARKER.test(text)) return LINE_START_ESCAPE + escaped.slice(1);
  const number = NUMBERED_MARKER.exec(text);
  if (number) return LINE_START_ESCAPE + number[0] + escaped.slice(number[0].length + 1);
  return escaped;
}

const ESCAPE_AT_LINE_START = /^((?:[ \t]*(?:>[ \t]?|[-+*][ \t]+|\d{1,9}[.)][ \t]+))*[ \t]*)\u0000(\d+(?=\. ))?/gm;

function settleLineStartEscapes(markdown: string): string {
  if (!markdown.includes(LINE_START_ESCAPE)) return markdown;
  return markdown
    .replace(ESCAPE_AT_LINE_START, (_, blockPrefix: string, number?: string) => (number ? `${blockPrefix}${number}\\` : `${blockPrefix}\\`))
    .replaceAll(LINE_START_ESCAPE, '');
}

/**
 * A GFM table needs a header row of header cells; a specification table often has none (or only a
 * header cell at the start of each row), and the plugin would leave it as HTML. Its first row then
 * stands as the header, so that every row stays a table row. Nothing may stand before the rows: a
 * caption, which GFM has no place for, becomes the paragraph above the table, and column widths
 * (<colgroup>) go; the plugin left a table with either as HTML.
 */
function withHeaderRows(html: string): string {
  if (!/<table\b/i.test(html)) return html;
  const document = parseDocument(`<!doctype html><html><body>${html}</body></html>`);
  const body = document.body;
  if (!body) return html;
  // Innermost first: unwrapping a table copies its content, so a table inside must be done by then.
  for (const table of [...body.querySelectorAll('table')].reverse()) {
    if (!isDataTable(table)) {
      unwrapTable(document, table);
      continue;
    }
    moveCaptionAbove(document, table);
    for (const columns of [...table.children].filter((child) => child.nodeName === 'COLGROUP' || child.nodeName === 'COL')) columns.remove();
    const firstRow = table.querySelector('tr');
    if (!firstRow || [...firstRow.children].every((cell) => cell.nodeName === 'TH')) continue;
    for (const cell of [...firstRow.children]) {
      if (cell.nodeName !== 'TD') continue;
      const header = document.createElement('th');
      header.innerHTML = cell.innerHTML;
      cell.replaceWith(header);
    }
  }
  return body.innerHTML;
}

const TABLE_SECTIONS = new Set(['THEAD', 'TBODY', 'TFOOT']);

/**
 * Whether a table reads the same to a standard HTML parser: rows among its own children or its
 * sections', and no table straight inside (a parser closes the outer table there). turndown
 * re-parses the HTML, and a table it found without rows made the GFM plugin throw (6 of
 * extraction-dev's 1,343 pages).
 */
function isDataTable(table: DomElement): boolean {
  const parts = [...table.children].flatMap((child) => (TABLE_SECTIONS.has(child.nodeName) ? [...child.children] : [child]));
  return parts.some((part) => part.nodeName === 'TR') && !parts.some((part) => part.nodeName === 'TABLE');
}

function moveCaptionAbove(document: DomDocument, table: DomElement): void {
  const caption = [...table.children].find((child) => child.nodeName === 'CAPTION');
  if (!caption) return;
  const paragraph = document.createElement('p');
  paragraph.innerHTML = caption.innerHTML;
  table.parentNode?.insertBefore(paragraph, table);
  caption.remove();
}

/** A layout table: its content stays, as a block. */
function unwrapTable(document: DomDocument, table: DomElement): void {
  const block = document.createElement('div');
  block.innerHTML = table.innerHTML;
  table.replaceWith(block);
}

/**
 * The content as markdown. Relative links resolve against baseUrl when it is a web address
 * (http or https); without one they stay as written.
 */
export function htmlToMarkdown(html: string, baseUrl?: string): string {
  linkBase = httpAddress(baseUrl);
  let markdown: string;
  try {
    markdown = turndown.turndown(withHeaderRows(html.replaceAll(LINE_START_ESCAPE, '')));
  } finally {
    linkBase = null;
  }
  return settleLineStartEscapes(markdown)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

