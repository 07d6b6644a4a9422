/**
 * exa content: page text from Exa's index and crawler, POST {baseUrl}/contents {urls, text} with the
 * key in the x-api-key header (https://exa.ai/docs/reference/get-contents).
 */
import { expectArray, objectsOf, optionalString } from '../../providers/shared.js';
import type { ContentProvider, PageContent } from '../../providers/types.js';
import { exaClient, type ExaOptions } from './client.js';

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
