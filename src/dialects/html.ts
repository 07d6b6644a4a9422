/**
 * Plain text as HTML, for the vendors that answer in HTML when asked (Bing's textFormat=HTML,
 * Google's htmlTitle and htmlSnippet): searchgate's titles and snippets are plain text, so only the
 * characters HTML gives a meaning are escaped; no hit markup is added.
 */
const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** The text with & < > " ' escaped: safe as HTML content and in a quoted attribute. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
