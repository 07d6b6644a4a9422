/**
 * The main content as markdown: headings, lists, links, emphasis, code blocks and tables, through
 * turndown and its GitHub-flavoured-markdown plugin (tables, strikethrough).
 */
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
import { parseDocument, type DomDocument, type DomElement } from './dom.js';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_', hr: '---' });
turndown.use(gfm);
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'button', 'select', 'input', 'textarea']);
// Images carry no text in the extracted content, and their addresses would be noise to a reader.
turndown.remove('img');
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

/** The mark goes before the marker; a number's escape goes after its digits ("2024\\. "). */
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
 * stands as the header, so that every row stays a table row.
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

/** A layout table: its content stays, as a block. */
function unwrapTable(document: DomDocument, table: DomElement): void {
  const block = document.createElement('div');
  block.innerHTML = table.innerHTML;
  table.replaceWith(block);
}

export function htmlToMarkdown(html: string): string {
  const markdown = turndown.turndown(withHeaderRows(html.replaceAll(LINE_START_ESCAPE, '')));
  return settleLineStartEscapes(markdown)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
