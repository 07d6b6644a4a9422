/**
 * jina content: the Jina Reader. POST {readerBaseUrl}/ with JSON {url} (POST, as jina-ai/reader's
 * README advises, keeps a URL's #fragment and query intact) and Accept: application/json; the reply
 * is {code: 200, status: 20000, data: {title, description, url, content | text, publishedTime,
 * warning?}}. The key is optional: the Reader serves anonymous calls at a lower rate.
 *
 * A page the Reader cannot read is that page's problem, not the provider's: it yields no text
 * (null) and is not charged to the provider's health. A key, balance, rate limit or outage
 * problem throws.
 *
 * Also here, for the three Jina operations: the client of Jina's hosts, Jina's error envelope and
 * its classification.
 */
import { UpstreamError, type UpstreamFailureKind } from '../errors.js';
import { bearer, expectObject, optionalString, unlessPageFailed, vendorClient, type EnvelopeFailure, type VendorClient } from '../shared.js';
import type { JinaOptions } from '../search/jina.js';
import type { ContentProvider, PageContent } from '../types.js';

/** Where Jina's statuses differ from HTTP's defaults: 402 is a used-up balance (InsufficientBalanceError, InsufficientCreditsError). */
export const jinaClassify = (status: number): UpstreamFailureKind | undefined => (status === 402 ? 'quota' : undefined);

/**
 * Jina's error envelope, {data: null, code: <HTTP status>, name, status, message, retryAfter?}, in a
 * body answered with a 2xx status. Its hosts normally send the envelope's code as the HTTP status
 * too, but clients have met it inside a 200; reading it as content or as no results would hide a
 * used-up balance or a bad key.
 */
export function jinaEnvelopeFailure({ code, data, name, message, retryAfter }: Record<string, unknown>): EnvelopeFailure | null {
  if (typeof code !== 'number' || code < 400 || (data !== null && data !== undefined)) return null;
  return {
    code,
    detail: `${typeof name === 'string' ? name : 'Error'}: ${typeof message === 'string' ? message : ''}`,
    ...(typeof retryAfter === 'number' ? { retryAfterMs: retryAfter * 1000 } : {}),
  };
}

/** Calls to one of Jina's hosts (search, Reader, rerank), all with the account's one key. */
export const jinaClient = (provider: string, options: JinaOptions, baseUrl: string): VendorClient =>
  vendorClient(
    provider,
    { baseUrl, apiKey: options.apiKey, timeoutMs: options.timeoutMs },
    { auth: bearer, classify: jinaClassify, envelope: jinaEnvelopeFailure },
  );

/**
 * How page text is asked for. 'content' is the Reader's default (Readability's main content as
 * Markdown): links become their anchor text and images are dropped, since their URLs would eat a
 * client's max_characters. 'text' is document.body.innerText.
 */
export function readerHeaders(options: Pick<JinaOptions, 'readerFormat'>): Record<string, string> {
  return options.readerFormat === 'text'
    ? { 'x-return-format': 'text' }
    : { 'x-md-link-style': 'discarded', 'x-retain-images': 'none' };
}

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
    async fetchContent(url, { signal }): Promise<PageContent | null> {
      const envelope = await unlessPageFailed(
        (status, body) => isPageFailure(status, errorName(body)),
        (pageClassify) => reader('/', { headers: readerHeaders(options), body: { url }, signal, classify: pageClassify }),
      );
      if (!envelope) return null;
      const data = expectObject(name, envelope.data, 'reply data');
      if (typeof data.warning === 'string' && TARGET_ERROR.test(data.warning)) return null;
      if (typeof data.content !== 'string' && typeof data.text !== 'string') throw new UpstreamError(name, 'garbage', 'reply data has neither content nor text');
      const [asked, other] = options.readerFormat === 'text' ? [data.text, data.content] : [data.content, data.text];
      const text = optionalString(asked) ?? optionalString(other);
      if (!text) return null;
      return { text, title: optionalString(data.title), datePublished: optionalString(data.publishedTime) };
    },
  };
}
