/**
 * A fake of Firecrawl's scrape endpoint (API v2) on loopback.
 *
 * Sources:
 * - docs.firecrawl.dev/features/scrape and its snippets (firecrawl/firecrawl-docs
 *   snippets/v2/scrape/base/curl.mdx, output.mdx): POST https://api.firecrawl.dev/v2/scrape,
 *   `Authorization: Bearer fc-…`, body {url, formats: ["markdown", …]}; the reply example
 *   {success: true, data: {markdown: "Launch Week I is here! [See our Day 2 Release 🚀](…)…",
 *   metadata: {title: "Home - Firecrawl", description, language, keywords, robots, ogTitle, …,
 *   sourceURL: "https://firecrawl.dev", statusCode: 200}}} is the first fixture. Keyless calls are
 *   served ("No API key needed to get started").
 * - docs.firecrawl.dev/api-reference/errors (firecrawl-docs api-reference/errors.mdx): every error
 *   is {success: false, error, code?, details?}; 401 "Unauthorized: Invalid token", 402 "Payment
 *   Required: Insufficient credits", 408 "Request Timeout", 429 "Rate limit exceeded" with
 *   Retry-After, 500 "Internal Server Error".
 * - firecrawl/firecrawl apps/api/src/controllers/v2/scrape.ts and scrape-error-payload(.test).ts:
 *   SCRAPE_TIMEOUT and CONCURRENCY_QUEUE_TIMEOUT answer 408; SCRAPE_DNS_RESOLUTION_ERROR answers 200
 *   with success: false; UNSUPPORTED_SITE 403; other scrape failures 500 with their code, e.g.
 *   SCRAPE_SITE_ERROR with details {browserErrorCode, retryable, origin: target_site|provider_proxy}.
 * - apps/js-sdk/firecrawl/src/v2/types.ts: ScrapeOptions (the keys the strict request schema
 *   accepts) and DocumentMetadata (title, url, sourceURL, statusCode, publishedTime, error, …).
 */
import type { ServerResponse } from 'node:http';
import { rawReply, stall, type Fault } from '../../helpers/faults.js';
import { sendJson, type RecordedRequest } from '../../helpers/gateway.js';
import { pathOf, startVendorFake } from '../../helpers/vendor-fake.js';

export const FIRECRAWL_KEY = 'fc-5e1b9d0c7a3f4e2b8c6d0a1f2e3b4c5dTEST';

/** What Firecrawl finds at a URL. */
type FirecrawlPage =
  | { kind: 'ok'; markdown: string; metadata: Record<string, unknown> }
  | { kind: 'target404' }
  | { kind: 'timeout' }
  | { kind: 'dns' }
  | { kind: 'unsupported' }
  | { kind: 'site_error'; origin: 'target_site' | 'provider_proxy' };

export const FIRECRAWL_HOME = 'https://firecrawl.dev';

/** The documented example, its markdown completed past the "…". */
const FIRECRAWL_PAGES: Record<string, FirecrawlPage> = {
  [FIRECRAWL_HOME]: {
    kind: 'ok',
    markdown:
      'Launch Week I is here! [See our Day 2 Release 🚀](https://www.firecrawl.dev/blog/launch-week-i-day-2-doubled-rate-limits)[💥 Get 2 months free with yearly plan](https://www.firecrawl.dev/pricing)\n\n' +
      '[![Firecrawl logo](https://www.firecrawl.dev/logo.png)](https://www.firecrawl.dev/)\n\n' +
      '# Turn websites into LLM-ready data\n\n' +
      'Power your AI apps with clean data crawled from any website. ![hero](https://www.firecrawl.dev/hero.png \"Hero\")\n\n' +
      '- [Docs](https://docs.firecrawl.dev) and [pricing (monthly)](https://www.firecrawl.dev/pricing_(monthly))\n\n\n\n' +
      '[1]: https://www.firecrawl.dev/blog',
    metadata: {
      title: 'Home - Firecrawl',
      description: 'Firecrawl crawls and converts any website into clean markdown.',
      language: 'en',
      keywords: 'Firecrawl,Markdown,Data,Mendable,Langchain',
      robots: 'follow, index',
      ogTitle: 'Firecrawl',
      ogDescription: 'Turn any website into LLM-ready data.',
      ogUrl: 'https://www.firecrawl.dev/',
      ogImage: 'https://www.firecrawl.dev/og.png?123',
      ogLocaleAlternate: [],
      ogSiteName: 'Firecrawl',
      publishedTime: '2024-08-12T10:00:00.000Z',
      sourceURL: 'https://firecrawl.dev',
      url: 'https://www.firecrawl.dev/',
      statusCode: 200,
    },
  },
  'https://example.com/missing': { kind: 'target404' },
  'https://slow.example/page': { kind: 'timeout' },
  'https://no-such-host.example/': { kind: 'dns' },
  'https://unsupported.example/profile': { kind: 'unsupported' },
  'https://refused.example/': { kind: 'site_error', origin: 'target_site' },
  'https://proxied.example/': { kind: 'site_error', origin: 'provider_proxy' },
};

/** The request keys v2's strict scrape schema accepts (ScrapeOptions plus url and the bookkeeping fields). */
const ACCEPTED_KEYS = new Set([
  'url', 'formats', 'headers', 'includeTags', 'excludeTags', 'onlyMainContent', 'timeout', 'waitFor', 'mobile', 'parsers', 'actions',
  'location', 'skipTlsVerification', 'removeBase64Images', 'fastMode', 'useMock', 'blockAds', 'proxy', 'maxAge', 'minAge', 'storeInCache',
  'lockdown', 'zeroDataRetention', 'origin', 'integration',
]);

export type FirecrawlFault = 'rate_limited' | 'quota' | 'concurrency_timeout' | 'server_error' | 'malformed' | 'wrong_shape' | 'stall';

const failure = (res: ServerResponse, status: number, error: string, extra: object = {}, headers: Record<string, string> = {}) =>
  sendJson(res, status, { success: false, error, ...extra }, headers);

function scrape(request: RecordedRequest, pages: ReadonlyMap<string, FirecrawlPage>, res: ServerResponse) {
  const body = request.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object') return failure(res, 400, 'Bad Request', { details: [{ code: 'invalid_type', path: [], message: 'Expected object' }] });
  const unknown = Object.keys(body).filter((key) => !ACCEPTED_KEYS.has(key));
  if (unknown.length) return failure(res, 400, 'Bad Request', { details: [{ code: 'unrecognized_keys', keys: unknown, path: [], message: `Unrecognized key(s) in object: ${unknown.join(', ')}` }] });
  if (typeof body.url !== 'string' || !/^https?:\/\//.test(body.url)) return failure(res, 400, 'Invalid URL');
  if (body.timeout !== undefined && (typeof body.timeout !== 'number' || !Number.isInteger(body.timeout) || body.timeout <= 0 || body.timeout > 300_000)) {
    return failure(res, 400, 'Bad Request', { details: [{ code: 'invalid_type', path: ['timeout'], message: 'Expected a positive integer of at most 300000' }] });
  }
  const url = body.url;
  const found = pages.get(url) ?? { kind: 'site_error', origin: 'target_site' };
  switch (found.kind) {
    case 'target404':
      return sendJson(res, 200, {
        success: true,
        data: {
          markdown: '# 404 Not Found\n\nThe page you requested does not exist.',
          metadata: { title: '404 Not Found', sourceURL: url, url, statusCode: 404, error: 'Not Found', proxyUsed: 'basic', creditsUsed: 1 },
        },
      });
    case 'timeout':
      return failure(res, 408, 'Scrape timed out', { code: 'SCRAPE_TIMEOUT' });
    case 'dns':
      return sendJson(res, 200, { success: false, code: 'SCRAPE_DNS_RESOLUTION_ERROR', error: `DNS resolution failed for hostname: ${new URL(url).hostname}. Please check if the domain is valid and accessible.` });
    case 'unsupported':
      return failure(res, 403, 'We apologize for the inconvenience but we do not support this site. If you are part of an enterprise and want to have a further conversation about this, please fill out our intake form here: https://fk4bvu0n5qp.typeform.com/to/Ej6oydlg', { code: 'UNSUPPORTED_SITE' });
    case 'site_error':
      return failure(res, 500, `Specified URL is failing to load in the browser. Error code: ERR_CONNECTION_REFUSED`, {
        code: 'SCRAPE_SITE_ERROR',
        details: { browserErrorCode: 'ERR_CONNECTION_REFUSED', retryable: found.origin === 'provider_proxy', origin: found.origin },
      });
  }
  const markdown = Array.isArray(body.formats) && body.formats.includes('markdown') ? { markdown: found.markdown } : {};
  sendJson(res, 200, { success: true, data: { ...markdown, metadata: { ...found.metadata, scrapeId: '0198e3a1-7c3b-7000-8000-000000000001', creditsUsed: 1 } } });
}

const FAULTS: Record<FirecrawlFault, Fault> = {
  rate_limited: (_request, res) =>
    failure(res, 429, 'Rate limit exceeded. Consumed (req/min): 11, Remaining (req/min): 0. Upgrade your plan at https://firecrawl.dev/pricing for increased rate limits or please retry after 7s, resets at Mon Sep 01 2025 12:00:07 GMT+0000', {}, { 'retry-after': '7' }),
  quota: (_request, res) =>
    failure(res, 402, 'Payment Required: Insufficient credits to perform this request. For more credits, you can upgrade your plan at https://firecrawl.dev/pricing.'),
  concurrency_timeout: (_request, res) => failure(res, 408, 'Concurrency limit queue timed out', { code: 'CONCURRENCY_QUEUE_TIMEOUT' }),
  server_error: (_request, res) =>
    failure(res, 500, 'An unexpected error occurred. Please contact help@firecrawl.com for help. Your exception ID is 0198e3a17c3b', { code: 'UNKNOWN_ERROR' }),
  malformed: rawReply(200, '{"success": true, "data": {"markdown": "# Trunc', 'application/json'),
  wrong_shape: (_request, res) => sendJson(res, 200, { status: 'ok', document: {} }),
  stall: stall(),
};

export async function startFakeFirecrawl(options: { pages?: Record<string, FirecrawlPage> } = {}) {
  const pages = new Map(Object.entries(options.pages ?? FIRECRAWL_PAGES));
  return startVendorFake<FirecrawlFault>({
    refuse: (request) => {
      if (request.method !== 'POST' || pathOf(request) !== '/v2/scrape') return (_request, res) => failure(res, 404, 'Not Found');
      const authorization = request.headers.authorization;
      if (authorization !== undefined && authorization !== `Bearer ${FIRECRAWL_KEY}`) return (_request, res) => failure(res, 401, 'Unauthorized: Invalid token');
      return undefined;
    },
    failures: FAULTS,
    answer: (request, res) => scrape(request, pages, res),
  });
}
