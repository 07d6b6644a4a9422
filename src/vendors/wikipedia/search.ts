/**
 * wikipedia: Wikipedia, or any MediaWiki, through the MediaWiki Action API, free and keyless:
 * GET {baseUrl}/w/api.php?action=query&list=search&srsearch=…&srlimit&sroffset&format=json&formatversion=2
 * (mediawiki.org/wiki/API:Search); page text in text mode from TextExtracts
 * (mediawiki.org/wiki/Extension:TextExtracts#API). Errors come as HTTP 200 with
 * {"error": {"code", "info"}} (mediawiki.org/wiki/API:Errors_and_warnings), and Wikimedia's
 * User-Agent policy (foundation.wikimedia.org/wiki/Policy:User-Agent_policy) refuses requests that
 * do not say who is calling.
 */
import { isWithinSite } from '../../util/domains.js';
import { UpstreamError, type UpstreamFailureKind } from '../../providers/errors.js';
import {
  endpoint,
  expectArray,
  expectObject,
  languageSubtags,
  objectsOf,
  optionalNumber,
  optionalString,
  plainText,
  providerOptionsSchema,
  readResults,
  searchCapabilities,
  vendorClient,
} from '../../providers/shared.js';
import type { ProviderSearchResult, ProviderType, SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';

export interface WikipediaOptions {
  /**
   * The wiki's root. Default https://{language}.wikipedia.org: {language} becomes the request's
   * language (or the `language` option). A root without {language}, such as an intranet wiki's, is
   * that one wiki whatever the language.
   */
  baseUrl: string;
  /** Where api.php lives under the root; default /w/api.php, as on every Wikimedia wiki. */
  apiPath: string;
  /** Article URLs under the root, $1 standing for the title; default /wiki/$1 (MediaWiki's $wgArticlePath). */
  articlePath: string;
  /** The wiki's language when the request names none: a Wikipedia subdomain such as en, de, simple; default en. */
  language: string;
  /** Wikimedia requires a descriptive User-Agent with contact information: put your deployment's here. */
  userAgent: string;
  timeoutMs: number;
  /** Page-text requests in flight at once in text mode: TextExtracts gives one whole article per request. */
  textConcurrency: number;
}

/** srlimit may reach 500, but a search page of 50 already costs the wiki noticeably more than 10. */
const MAX_PAGE_SIZE = 50;
const LANGUAGE_CODE = /^[a-z][a-z0-9-]{1,20}$/;
/** BCP 47 codes whose Wikipedia lives under another name. */
const WIKI_FOR_LANGUAGE: Record<string, string> = { nb: 'no' };

function wikiLanguage(requested: string | null, fallback: string): string {
  const language = languageSubtags(requested)?.language;
  if (language) return WIKI_FOR_LANGUAGE[language] ?? language;
  return LANGUAGE_CODE.test(fallback) ? fallback : 'en';
}

/** MediaWiki's wfUrlencode: spaces as underscores, and ;@$!*(),/~: left readable. */
function articleUrl(root: string, articlePath: string, title: string): string {
  const encoded = encodeURIComponent(title.replace(/ /g, '_'))
    .replace(/'/g, '%27')
    .replace(/%(3B|40|24|2C|2F|3A)/gi, (escape) => decodeURIComponent(escape));
  return endpoint(root, articlePath.replace('$1', encoded));
}

/**
 * MediaWiki reports failures in a 200 reply. `maxlag` comes with a Retry-After header of at least 5
 * seconds (Manual:Maxlag_parameter); callJson shows no headers of a 200, so the body's lag, with
 * that floor, stands in.
 */
function mediaWikiError(name: string, error: Record<string, unknown>): UpstreamError {
  const code = String(error.code ?? 'unknown');
  const info = optionalString(error.info) ?? '';
  const kinds: Array<[RegExp, UpstreamFailureKind]> = [
    [/^ratelimited$/, 'rate_limited'],
    [/^(maxlag|readonly)$|^internal_api_error/, 'unavailable'],
    [/^(readapidenied|permissiondenied|blocked|autoblocked|mwoauth-|badtoken|assertuserfailed)/, 'auth'],
  ];
  const kind = kinds.find(([pattern]) => pattern.test(code))?.[1] ?? 'bad_request';
  const retryAfterMs = code === 'maxlag' ? Math.max(5, optionalNumber(error.lag) ?? 0) * 1000 : undefined;
  return new UpstreamError(name, kind, `MediaWiki error ${code}${info ? `: ${info.slice(0, 200)}` : ''}`, 200, retryAfterMs);
}

type WikiApi = (params: Record<string, string | number>) => Promise<Record<string, unknown>>;

function checked(name: string, reply: Record<string, unknown>): Record<string, unknown> {
  if (reply.error !== undefined) throw mediaWikiError(name, expectObject(name, reply.error, 'error'));
  return reply;
}

export function createWikipediaSearch(name: string, options: WikipediaOptions): SearchProvider {
  return {
    name,
    // No freshness: CirrusSearch has no date filter.
    capabilities: searchCapabilities({
      maxPageSize: MAX_PAGE_SIZE,
      pagination: true,
      // Every result is on the wiki's own host, so a domain filter either keeps all or none of them:
      // decided here without asking the wiki.
      includeDomains: true,
      excludeDomains: true,
      text: true,
    }),
    async search(call: SearchCall): Promise<SearchPage> {
      const root = options.baseUrl.replace('{language}', wikiLanguage(call.language, options.language));
      const host = new URL(root).hostname;
      const excluded = call.excludeDomains.some((domain) => isWithinSite(host, domain));
      const outsideIncluded = call.includeDomains.length > 0 && !call.includeDomains.some((domain) => isWithinSite(host, domain));
      if (excluded || outsideIncluded) return { results: [], hasMore: false, totalEstimatedMatches: 0 };

      const wiki = vendorClient(name, { baseUrl: root, timeoutMs: options.timeoutMs }, { headers: { 'user-agent': options.userAgent } });
      const api: WikiApi = (params) =>
        wiki(options.apiPath, { query: { action: 'query', format: 'json', formatversion: 2, ...params }, signal: call.signal });
      const reply = checked(
        name,
        await api({
          list: 'search',
          srsearch: call.query,
          srlimit: Math.min(call.count, MAX_PAGE_SIZE),
          sroffset: call.offset,
          srprop: 'snippet|timestamp|wordcount',
          srinfo: 'totalhits',
        }),
      );
      const query = expectObject(name, reply.query, 'query');
      const results = readResults(name, query.search, 'query.search', (hit) =>
        typeof hit.title === 'string'
          ? {
              url: articleUrl(root, options.articlePath, hit.title),
              title: hit.title,
              snippet: plainText(hit.snippet),
              // The time of the page's latest revision: the date of the text a reader finds there, which
              // is what a wiki page has instead of a publication date (its creation date describes a
              // text long since rewritten).
              datePublished: optionalString(hit.timestamp),
              pageId: optionalNumber(hit.pageid),
            }
          : null,
      );
      if (call.text) await fillExtracts(name, results, api, options.textConcurrency);
      const searchinfo = query.searchinfo as { totalhits?: unknown } | undefined;
      const next = (reply.continue as { sroffset?: unknown } | undefined)?.sroffset;
      return {
        results: results.map(({ pageId: _pageId, ...result }) => result),
        hasMore: typeof next === 'number',
        totalEstimatedMatches: optionalNumber(searchinfo?.totalhits),
      };
    },
  };
}

/**
 * Whole-article plain text, one page per request: TextExtracts lowers exlimit to 1 for whole
 * articles ("exlimit was too large for a whole article extracts request"). A page whose text cannot
 * be had keeps its result without text, for the content chain to fill; the search itself answered.
 */
async function fillExtracts(
  name: string,
  results: Array<ProviderSearchResult & { pageId: number | null }>,
  api: WikiApi,
  concurrency: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < results.length) {
      const result = results[next++]!;
      if (result.pageId === null) continue;
      try {
        const reply = checked(name, await api({ prop: 'extracts', explaintext: 1, exsectionformat: 'plain', pageids: result.pageId }));
        const pages = objectsOf(expectArray(name, (reply.query as { pages?: unknown } | undefined)?.pages, 'query.pages'));
        result.text = optionalString(pages.find((page) => page.pageid === result.pageId)?.extract);
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, results.length) }, worker));
}

const wikipediaOptionsSchema = providerOptionsSchema('wikipedia', {
  defaultBaseUrl: 'https://{language}.wikipedia.org',
  apiKey: 'none',
  properties: {
    apiPath: { type: 'string', pattern: '^/', default: '/w/api.php' },
    articlePath: { type: 'string', pattern: '^/.*\\$1', default: '/wiki/$1' },
    language: { type: 'string', pattern: LANGUAGE_CODE.source, default: 'en' },
    userAgent: {
      type: 'string',
      minLength: 1,
      default: 'searchgate/0.1 (self-hosted search gateway; operator contact not configured)',
    },
    textConcurrency: { type: 'integer', minimum: 1, maximum: 8, default: 4 },
  },
});

export const wikipediaProviderType: ProviderType = {
  optionsSchema: wikipediaOptionsSchema,
  search: createWikipediaSearch,
};
