/**
 * tavily content: page text through Tavily Extract, POST {baseUrl}/extract {urls, extract_depth,
 * format} with a Bearer key (https://docs.tavily.com/documentation/api-reference/endpoint/extract).
 */
import { expectArray, objectsOf, optionalString } from '../../providers/shared.js';
import type { ContentProvider, PageContent, PageFailure } from '../../providers/types.js';
import { markdownRawContent, rawContentFormat, tavilyClient, type TavilyOptions } from './client.js';
import { pageFailureOf, type TavilyExtractRequest } from './wire.js';

export function createTavilyContent(name: string, options: TavilyOptions): ContentProvider {
  const tavily = tavilyClient(name, options);
  return {
    name,
    async fetchContent(url, { markdown: markdownAsked, signal }): Promise<PageContent | PageFailure | null> {
      const body: TavilyExtractRequest = { urls: [url], extract_depth: options.extractDepth, format: rawContentFormat(options, markdownAsked) };
      const reply = await tavily('/extract', { body, signal });
      const results = objectsOf(expectArray(name, reply.results, 'results'));
      // A URL Tavily could not extract comes back in failed_results of a 200 reply: the page's own
      // failure, in Tavily's words, not the provider's.
      const failed = Array.isArray(reply.failed_results) ? objectsOf(reply.failed_results).find((entry) => entry.url === url) : undefined;
      if (failed) return pageFailureOf(failed.error);
      const page = results.find((result) => result.url === url) ?? results[0];
      const raw = optionalString(page?.raw_content);
      if (!page || !raw) return null;
      return { ...(markdownAsked ? markdownRawContent(raw, options) : { text: raw }), title: optionalString(page.title) };
    },
  };
}
