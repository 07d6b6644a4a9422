/**
 * exa content: page text from Exa's index and crawler, POST {baseUrl}/contents {urls, text} with the
 * key in the x-api-key header (https://exa.ai/docs/reference/get-contents). Also home of the client
 * every Exa operation calls through, so search (src/providers/search/exa.ts) reads errors the same way.
 */
import type { UpstreamFailureKind } from '../errors.js';
import { expectArray, objectsOf, optionalString, vendorClient, type VendorClient } from '../shared.js';
import type { ContentProvider, PageContent } from '../types.js';
import type { ExaOptions } from '../search/exa.js';

/**
 * Exa's 402 means the account's credits or the key's budget are spent (tags NO_MORE_CREDITS,
 * API_KEY_BUDGET_EXCEEDED, https://exa.ai/docs/reference/error-codes): no retry helps for a while.
 */
function classifyExaFailure(status: number): UpstreamFailureKind | undefined {
  return status === 402 ? 'quota' : undefined;
}

export const exaClient = (provider: string, options: ExaOptions): VendorClient =>
  vendorClient(provider, options, { auth: (apiKey) => ({ 'x-api-key': apiKey }), classify: classifyExaFailure });

export function createExaContent(name: string, options: ExaOptions): ContentProvider {
  const exa = exaClient(name, options);
  return {
    name,
    async fetchContent(url, { maxCharacters, signal }): Promise<PageContent | null> {
      const reply = await exa('/contents', { body: { urls: [url], text: { maxCharacters } }, signal });
      const results = objectsOf(expectArray(name, reply.results, 'results'));
      // A page Exa could not crawl is reported in statuses of a 200 reply: no text for it, not a failure.
      const statuses = Array.isArray(reply.statuses) ? objectsOf(reply.statuses) : [];
      if (statuses.some((status) => status.status === 'error')) return null;
      const page = results.find((result) => result.url === url || result.id === url) ?? results[0];
      const text = optionalString(page?.text);
      if (!page || !text) return null;
      return { text, title: optionalString(page.title), datePublished: optionalString(page.publishedDate) };
    },
  };
}
