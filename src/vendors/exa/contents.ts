/**
 * exa content: page text from Exa's index and crawler, POST {baseUrl}/contents {urls, text} with the
 * key in the x-api-key header (https://exa.ai/docs/reference/get-contents).
 */
import { expectArray, objectsOf, optionalString } from '../../providers/shared.js';
import type { ContentProvider, PageContent, PageFailure } from '../../providers/types.js';
import { exaClient, type ExaOptions } from './client.js';
import { pageFailureOf, type ExaContentsRequest } from './wire.js';

export function createExaContent(name: string, options: ExaOptions): ContentProvider {
  const exa = exaClient(name, options);
  return {
    name,
    async fetchContent(url, { maxCharacters, signal }): Promise<PageContent | PageFailure | null> {
      const body: ExaContentsRequest = { urls: [url], text: { maxCharacters } };
      const reply = await exa('/contents', { body, signal });
      const results = objectsOf(expectArray(name, reply.results, 'results'));
      // A page Exa could not crawl is reported in statuses of a 200 reply: the page's own failure,
      // with Exa's reason, not the provider's.
      const statuses = Array.isArray(reply.statuses) ? objectsOf(reply.statuses) : [];
      const failed = statuses.find((status) => status.status === 'error');
      if (failed) return pageFailureOf(failed.error);
      const page = results.find((result) => result.url === url || result.id === url) ?? results[0];
      const text = optionalString(page?.text);
      if (!page || !text) return null;
      return { text, title: optionalString(page.title), datePublished: optionalString(page.publishedDate) };
    },
  };
}
