/**
 * tavily content: page text through Tavily Extract, POST {baseUrl}/extract {urls, extract_depth,
 * format} with a Bearer key (https://docs.tavily.com/documentation/api-reference/endpoint/extract).
 */
import { expectArray, objectsOf, optionalString } from '../../providers/shared.js';
import type { ContentProvider, PageContent } from '../../providers/types.js';
import { tavilyClient, type TavilyOptions } from './client.js';

export function createTavilyContent(name: string, options: TavilyOptions): ContentProvider {
  const tavily = tavilyClient(name, options);
  return {
    name,
    async fetchContent(url, { signal }): Promise<PageContent | null> {
      const reply = await tavily('/extract', { body: { urls: [url], extract_depth: options.extractDepth, format: options.textFormat }, signal });
      const results = objectsOf(expectArray(name, reply.results, 'results'));
      // A URL Tavily could not extract comes back in failed_results of a 200 reply: no text, not a failure.
      const page = results.find((result) => result.url === url) ?? results[0];
      const text = optionalString(page?.raw_content);
      if (!page || !text) return null;
      return { text, title: optionalString(page.title) };
    },
  };
}
