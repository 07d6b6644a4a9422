/**
 * tavily content: page text through Tavily Extract, POST {baseUrl}/extract {urls, extract_depth,
 * format} with a Bearer key (https://docs.tavily.com/documentation/api-reference/endpoint/extract).
 * Also home of the client every Tavily operation calls through, so search
 * (src/providers/search/tavily.ts) reads errors the same way.
 */
import type { UpstreamFailureKind } from '../errors.js';
import { bearer, expectArray, objectsOf, optionalString, vendorClient, type VendorClient } from '../shared.js';
import type { ContentProvider, PageContent } from '../types.js';
import type { TavilyOptions } from '../search/tavily.js';

/**
 * Tavily's own statuses (https://help.tavily.com/articles/8645538886-understanding-http-errors):
 * 432 "exceeds your plan's set usage limit" and 433 "exceeds the pay-as-you-go limit" are used-up
 * allowances, not rate limits: no retry helps until the plan or limit changes.
 */
function classifyTavilyFailure(status: number): UpstreamFailureKind | undefined {
  return status === 432 || status === 433 ? 'quota' : undefined;
}

export const tavilyClient = (provider: string, options: TavilyOptions): VendorClient =>
  vendorClient(provider, options, { auth: bearer, classify: classifyTavilyFailure });

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
