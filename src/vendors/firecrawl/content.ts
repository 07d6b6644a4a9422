/**
 * firecrawl: page content from Firecrawl's scrape endpoint (API v2). POST {baseUrl}/v2/scrape with
 * `Authorization: Bearer fc-…` and JSON {url, formats: ["markdown"], onlyMainContent, timeout};
 * the reply is {success: true, data: {markdown, metadata: {title, sourceURL, url, statusCode,
 * publishedTime?, …}}}, errors {success: false, code?, error} (docs.firecrawl.dev/api-reference/errors,
 * firecrawl/firecrawl apps/api/src/controllers/v2/scrape.ts).
 *
 * Our text is plain text, Firecrawl's is Markdown: images are dropped and links reduced to their
 * anchor text (a link-heavy page is mostly URLs, which would eat a client's max_characters), while
 * headings and list markers stay, being short and readable. A request for markdown gets Firecrawl's
 * own, as it came.
 */
import { UpstreamError } from '../../providers/errors.js';
import type { Classify } from '../../providers/http.js';
import { bearer, expectObject, markdownToText, optionalString, providerOptionsSchema, unlessPageFailed, vendorClient } from '../../providers/shared.js';
import type { ContentProvider, PageContent, ProviderType } from '../../providers/types.js';

export interface FirecrawlOptions {
  /** api.firecrawl.dev, or a self-hosted Firecrawl. */
  baseUrl: string;
  /** Optional: Firecrawl serves keyless calls at a low rate. */
  apiKey?: string;
  timeoutMs: number;
  /** Leave out headers, navigation and footers (Firecrawl's default). */
  onlyMainContent: boolean;
}

const firecrawlOptionsSchema = providerOptionsSchema('firecrawl', {
  defaultBaseUrl: 'https://api.firecrawl.dev',
  apiKey: 'optional',
  timeoutMs: 30_000,
  properties: { onlyMainContent: { type: 'boolean', default: true } },
});

/** Firecrawl is asked to give up this much before we do, so a slow page comes back as its 408, not our timeout. */
const UPSTREAM_TIMEOUT_MARGIN_MS = 1_500;

/** The codes Firecrawl uses for failures of the page, not of Firecrawl (see the scrape controller). */
const PAGE_FAILURE_CODES = new Set([
  'SCRAPE_TIMEOUT', // 408: the page took longer than `timeout`
  'SCRAPE_DNS_RESOLUTION_ERROR', // 200 with success: false
  'UNSUPPORTED_SITE', // 403: a site Firecrawl does not scrape
  'unsafe_domain_blocked', // 403
  'SCRAPE_MEDIA_ACCESS_DENIED', // 403
]);

interface FirecrawlError {
  code?: unknown;
  error?: unknown;
  details?: { origin?: unknown };
}

function asFirecrawlError(body: unknown): FirecrawlError {
  return body && typeof body === 'object' ? (body as FirecrawlError) : {};
}

function isPageFailure(body: FirecrawlError): boolean {
  if (typeof body.code === 'string' && PAGE_FAILURE_CODES.has(body.code)) return true;
  // A browser error of the target site; the same code with origin provider_proxy is Firecrawl's own.
  return body.code === 'SCRAPE_SITE_ERROR' && body.details?.origin === 'target_site';
}

/** Firecrawl's statuses where they differ from HTTP's defaults. */
const classify: Classify = (status, _raw, body) => {
  if (status === 402) return 'quota'; // "Payment Required: Insufficient credits"
  // Waiting for one of the plan's concurrent browsers timed out: the plan's limit, not an outage.
  if (status === 408 && asFirecrawlError(body).code === 'CONCURRENCY_QUEUE_TIMEOUT') return 'rate_limited';
  return undefined;
};

/** A metadata value; Firecrawl gives an array when a page repeats a meta tag. */
function firstString(value: unknown): string | null {
  return optionalString(Array.isArray(value) ? value[0] : value);
}

export function createFirecrawlContent(name: string, options: FirecrawlOptions): ContentProvider {
  const firecrawl = vendorClient(name, options, { auth: bearer, classify });
  return {
    name,
    async fetchContent(url, { markdown: markdownAsked, signal }): Promise<PageContent | null> {
      const body = await unlessPageFailed(
        (_status, body) => isPageFailure(asFirecrawlError(body)),
        (pageClassify) =>
          firecrawl('/v2/scrape', {
            body: {
              url,
              formats: ['markdown'],
              onlyMainContent: options.onlyMainContent,
              timeout: Math.max(1_000, options.timeoutMs - UPSTREAM_TIMEOUT_MARGIN_MS),
            },
            signal,
            classify: pageClassify,
          }),
      );
      if (!body) return null;
      if (body.success === false) {
        if (isPageFailure(asFirecrawlError(body))) return null;
        throw new UpstreamError(name, 'garbage', 'reply says success: false with HTTP 200');
      }
      if (body.success !== true) throw new UpstreamError(name, 'garbage', 'reply has no success flag');
      const data = expectObject(name, body.data, 'reply data');
      const metadata = data.metadata && typeof data.metadata === 'object' ? (data.metadata as Record<string, unknown>) : {};
      // Firecrawl scrapes error pages too; their Markdown is the error page, not the result's text.
      if (typeof metadata.statusCode === 'number' && metadata.statusCode >= 400) return null;
      const markdown = typeof data.markdown === 'string' ? data.markdown : null;
      if (markdown === null && data.markdown !== undefined) throw new UpstreamError(name, 'garbage', 'reply has a markdown that is not a string');
      const text = markdown ? markdownToText(markdown) : '';
      if (!text) return null;
      return {
        text,
        ...(markdownAsked ? { markdown } : {}),
        title: firstString(metadata.title) ?? firstString(metadata.ogTitle),
        datePublished:
          firstString(metadata.publishedTime) ??
          firstString(metadata['article:published_time']) ??
          firstString(metadata.dcTermsCreated) ??
          firstString(metadata.dcDateCreated),
      };
    },
  };
}

export const firecrawlProviderType: ProviderType = {
  optionsSchema: firecrawlOptionsSchema,
  content: createFirecrawlContent,
};
