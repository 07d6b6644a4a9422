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
turndown.escape = (text: string) => escapeMarkdown(text).replace(/(?<=[\p{L}\p{N}])\\_(?=[\p{L}\p{N}])/gu, '_');

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
  return turndown
    .turndown(withHeaderRows(html))
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
