/**
 * The main content as markdown: headings, lists, links, emphasis, code blocks and tables, through
 * turndown and its GitHub-flavoured-markdown plugin (tables, strikethrough).
 */
import TurndownService from 'turndown';
import { gfm } from 'turndown-plugin-gfm';
import { parseDocument } from './dom.js';

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-', emDelimiter: '_', hr: '---' });
turndown.use(gfm);
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe', 'button', 'select', 'input', 'textarea']);
// Images carry no text in the extracted content, and their addresses would be noise to a reader.
turndown.remove('img');

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
  for (const table of body.querySelectorAll('table')) {
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

export function htmlToMarkdown(html: string): string {
  return turndown
    .turndown(withHeaderRows(html))
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
