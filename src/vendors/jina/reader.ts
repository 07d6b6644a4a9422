/**
 * jina content: the Jina Reader. POST {readerBaseUrl}/ with JSON {url} (POST, as jina-ai/reader's
 * README advises, keeps a URL's #fragment and query intact) and Accept: application/json; the reply
 * is {code: 200, status: 20000, data: {title, description, url, content | text, publishedTime,
 * warning?}}. The key is optional: the Reader serves anonymous calls at a lower rate.
 *
 * A page the Reader cannot read is that page's problem, not the provider's: it yields no text
 * (null) and is not charged to the provider's health. A key, balance, rate limit or outage
 * problem throws.
 */
import { UpstreamError } from '../../providers/errors.js';
import { expectObject, optionalString, unlessPageFailed } from '../../providers/shared.js';
import { jinaClient, markdownContent, readerFormatFor, readerHeaders, type JinaOptions } from './client.js';
import type { ContentProvider, PageContent } from '../../providers/types.js';

/**
 * The Reader's failures that belong to the page: 422 AssertionFailureError ("Failed to goto …",
 * "No content available"), 451 (domain blocked for abuse or legal reasons), and 403
 * AbuseAlleviationError (anonymous access to that one domain paused).
 */
function isPageFailure(code: number, name: string | undefined): boolean {
  return code === 422 || code === 451 || (code === 403 && name === 'AbuseAlleviationError');
}

function errorName(body: unknown): string | undefined {
  const name = (body as { name?: unknown } | null | undefined)?.name;
  return typeof name === 'string' ? name : undefined;
}

/** The Reader answers 200 for a page whose server answered an error, with this warning: its text is the error page. */
const TARGET_ERROR = /Target URL returned error [45]\d\d/i;

export function createJinaContent(name: string, options: JinaOptions): ContentProvider {
  const reader = jinaClient(name, options, options.readerBaseUrl);
  return {
    name,
    async fetchContent(url, { markdown: markdownAsked, signal }): Promise<PageContent | null> {
      // Markdown is the Reader's `content`; a deployment reading `text` asks for content instead when
      // a request wants markdown, and reads its text from it.
      const format = readerFormatFor(options, markdownAsked);
      const envelope = await unlessPageFailed(
        (status, body) => isPageFailure(status, errorName(body)),
        (pageClassify) => reader('/', { headers: readerHeaders({ readerFormat: format }), body: { url }, signal, classify: pageClassify }),
      );
      if (!envelope) return null;
      const data = expectObject(name, envelope.data, 'reply data');
      if (typeof data.warning === 'string' && TARGET_ERROR.test(data.warning)) return null;
      if (typeof data.content !== 'string' && typeof data.text !== 'string') throw new UpstreamError(name, 'garbage', 'reply data has neither content nor text');
      const [asked, other] = format === 'text' ? [data.text, data.content] : [data.content, data.text];
      const read = optionalString(asked) ?? optionalString(other);
      if (!read) return null;
      const markdown = markdownAsked ? optionalString(data.content) : null;
      return { ...(markdown ? markdownContent(markdown, options) : { text: read }), title: optionalString(data.title), datePublished: optionalString(data.publishedTime) };
    },
  };
}
