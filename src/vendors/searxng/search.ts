/**
 * searxng: a SearXNG metasearch instance, usually the operator's own, through its JSON search API:
 * GET {baseUrl}/search?q=…&format=json&pageno=N (docs.searxng.org/dev/search_api.html; the reply is
 * searx/webutils.py get_json_response: results, number_of_results, unresponsive_engines…).
 *
 * Two traps this adapter turns into failures an operator can act on: a fresh instance serves only
 * HTML and answers an API call with 403 (json missing from search.formats), and an instance whose
 * engines are all rate-limited or CAPTCHA-blocked answers 200 with no results.
 */
import { PRESET_SPAN_MS, type Freshness, type FreshnessPreset } from '../../api/freshness.js';
import { UpstreamError } from '../../providers/errors.js';
import {
  bearer,
  expectArray,
  languageSubtags,
  objectsOf,
  optionalNumber,
  PRESET_PERIODS,
  providerOptionsSchema,
  readResults,
  searchCapabilities,
  secretsOf,
  stringFields,
  vendorClient,
  withSiteOperators,
} from '../../providers/shared.js';
import type { ProviderType, SearchCall, SearchPage, SearchProvider } from '../../providers/types.js';
import {
  SEARXNG_GENERAL_CATEGORY,
  SEARXNG_JSON_FORMAT,
  SEARXNG_SEARCH_PATH,
  type SearxngReply,
  type SearxngResult,
  type SearxngSearchParameters,
  type SearxngTimeRange,
} from './wire.js';

export interface SearxngOptions {
  /** The instance's root, e.g. http://searxng:8080. No default: public instances mostly refuse JSON. */
  baseUrl: string;
  /** For an instance behind an authenticating reverse proxy: sent as Authorization: Bearer. */
  apiKey?: string;
  /** Further headers such a proxy wants (Basic auth, a shared-secret header); their values never appear in errors. */
  headers?: Record<string, string>;
  timeoutMs: number;
  /** SearXNG categories to search, comma-separated; default general (the web results). */
  categories: string;
  /** Only these engines (comma-separated names from settings.yml); default: the categories' enabled engines. */
  engines?: string;
  /** Language when the request names none: BCP 47 ("en", "de-CH") or SearXNG's all/auto; default: the instance's. */
  language?: string;
  /** 0 off, 1 moderate, 2 strict; default: the instance's setting. */
  safesearch?: 0 | 1 | 2;
}

/** SearXNG has no page-size parameter: a page is whatever its engines return, merged (typically 10 to 40). */
const MAX_PAGE_SIZE = 100;
const USER_AGENT = 'searchgate (SearXNG JSON API client)';

const PRESETS_SHORTEST_FIRST: FreshnessPreset[] = ['oneDay', 'oneWeek', 'oneMonth', 'oneYear'];

/**
 * Presets are native. A date range is not (the gateway filters it), but the shortest time_range that
 * still reaches back to the range's first day narrows what the engines return, so fewer results are
 * fetched only to be dropped. A range starting more than a year ago gets none.
 */
function timeRange(freshness: Freshness, nowMs: number): SearxngTimeRange | undefined {
  if (freshness.kind === 'preset') return PRESET_PERIODS[freshness.preset];
  if (freshness.kind !== 'dates') return undefined;
  const covering = PRESETS_SHORTEST_FIRST.find((preset) => nowMs - PRESET_SPAN_MS[preset] <= freshness.fromMs);
  return covering ? PRESET_PERIODS[covering] : undefined;
}

/** SearXNG rejects (400) a language outside ^[a-z]{2,3}(-[a-zA-Z]{2})?$ but for its own all and auto. */
function searxngLanguage(tag: string | null | undefined): string | undefined {
  if (tag === 'all' || tag === 'auto') return tag;
  const subtags = languageSubtags(tag);
  if (!subtags) return undefined;
  return subtags.region ? `${subtags.language}-${subtags.region}` : subtags.language;
}

/**
 * Reasons SearXNG gives for an engine that did not answer (searx/webutils.py
 * exception_classname_to_text), "Suspended: "-prefixed while the engine sits out a ban. These three
 * mean the engine's site refused this instance.
 */
const BLOCKED = /too many requests|captcha|access denied/i;

function unresponsiveEngines(reply: SearxngReply): Array<[string, string]> {
  const pairs = Array.isArray(reply.unresponsive_engines) ? reply.unresponsive_engines : [];
  return pairs
    .filter((pair): pair is unknown[] => Array.isArray(pair) && typeof pair[0] === 'string')
    .map((pair) => [pair[0] as string, typeof pair[1] === 'string' ? pair[1] : 'no reason given']);
}

/**
 * An empty first page while engines failed. The reply does not list the engines that answered with
 * nothing, so "nothing matched" cannot be told from "nobody could look"; failing lets the chain's next
 * provider answer instead of telling the client the web has nothing. All refused → rate_limited (503
 * at our edge). Otherwise (engine timeouts, errors) → unavailable: our own call did not time out, the
 * instance answered, so a 504 would mislead.
 */
function blindSearch(name: string, failed: Array<[string, string]>): UpstreamError {
  const detail = failed.map(([engine, reason]) => `${engine}: ${reason}`).join('; ');
  if (failed.every(([, reason]) => BLOCKED.test(reason))) {
    return new UpstreamError(name, 'rate_limited', `no results because every engine that failed refused this SearXNG instance (rate limit or CAPTCHA): ${detail}`);
  }
  return new UpstreamError(name, 'unavailable', `no results because SearXNG's engines did not answer: ${detail}`);
}

/** The operator-facing reading of the statuses SearXNG's own setup causes. */
function explainRefusal(name: string, error: UpstreamError, behindProxy: boolean): UpstreamError {
  if (error.status === 403) {
    // searx/webapp.py: `if output_format not in settings['search']['formats']: flask.abort(403)`.
    const proxyHint = behindProxy ? ' (or, if the proxy in front of it refused, check apiKey and headers)' : '';
    return new UpstreamError(name, 'auth', `HTTP 403: JSON output is disabled on this SearXNG instance: add json to search.formats in settings.yml${proxyHint}`, 403);
  }
  if (error.status === 429) {
    // searx/botdetection answers 429 to clients that do not look like browsers, as API clients do.
    return new UpstreamError(
      name,
      'rate_limited',
      "HTTP 429: SearXNG's limiter refused the gateway; for a private instance set server.limiter: false in settings.yml or add the gateway's address to botdetection pass_ip in limiter.toml",
      429,
      error.retryAfterMs,
    );
  }
  return error;
}

export function createSearxngSearch(name: string, options: SearxngOptions): SearchProvider {
  const extraHeaders = options.headers ?? {};
  const secrets = [...secretsOf(options), ...Object.values(extraHeaders).filter(Boolean)];
  const behindProxy = secrets.length > 0;
  const searxng = vendorClient(name, options, { auth: bearer, headers: { 'user-agent': USER_AGENT, ...extraHeaders }, secrets });
  return {
    name,
    capabilities: searchCapabilities({
      maxPageSize: MAX_PAGE_SIZE,
      pagination: true,
      freshness: 'presets',
      // As site: operators in q, which SearXNG hands to every engine (its docs' own example is
      // `site:github.com SearXNG`). The big web engines (Google, Bing, DuckDuckGo, Brave, Startpage)
      // apply them; an engine that ignores them lets stray results through, and those the gateway's
      // re-check, which always runs, removes.
      includeDomains: true,
      excludeDomains: true,
    }),
    async search(call: SearchCall): Promise<SearchPage> {
      const query: SearxngSearchParameters = {
        q: withSiteOperators(call.query, call.includeDomains, call.excludeDomains),
        format: SEARXNG_JSON_FORMAT,
        pageno: call.page + 1,
        // SearXNG adds every engine of a named category to the named engines: engines alone when set.
        categories: options.engines ? undefined : options.categories,
        engines: options.engines,
        time_range: timeRange(call.freshness, call.nowMs),
        language: searxngLanguage(call.language ?? options.language),
        safesearch: options.safesearch,
      };
      let reply: SearxngReply;
      try {
        reply = await searxng(SEARXNG_SEARCH_PATH, { query, signal: call.signal });
      } catch (error) {
        throw error instanceof UpstreamError ? explainRefusal(name, error, behindProxy) : error;
      }
      return readSearxngReply(name, reply, call.page);
    },
  };
}

function readSearxngReply(name: string, reply: SearxngReply, page: number): SearchPage {
  const items = expectArray(name, reply.results, 'results');
  if (objectsOf(items).length === 0) {
    const failed = unresponsiveEngines(reply);
    // On a later page the first pages already answered; an empty one there is the end of the results.
    if (failed.length > 0 && page === 0) throw blindSearch(name, failed);
    return { results: [], hasMore: false };
  }
  const results = readResults(name, items, 'results', toResult);
  const total = optionalNumber(reply.number_of_results);
  return {
    results,
    // Pages vary in size and nothing in the reply says whether another exists; only an empty page
    // shows the end.
    hasMore: true,
    // 0 when no engine reported an estimate.
    totalEstimatedMatches: total && total > 0 ? total : null,
  };
}

const toResult = stringFields({
  title: 'title',
  // Plain text: SearXNG escapes it only for its own HTML pages (searx/webapp.py), never for JSON.
  snippet: 'content',
  // isoformat() of a naive datetime, or null when the engine gave none.
  datePublished: 'publishedDate',
} satisfies Partial<Record<string, keyof SearxngResult>>);

const searxngOptionsSchema = providerOptionsSchema('searxng', {
  apiKey: 'optional',
  properties: {
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    categories: { type: 'string', minLength: 1, default: SEARXNG_GENERAL_CATEGORY },
    engines: { type: 'string', minLength: 1 },
    language: { type: 'string', minLength: 2 },
    safesearch: { type: 'integer', enum: [0, 1, 2] },
  },
});

export const searxngProviderType: ProviderType = {
  optionsSchema: searxngOptionsSchema,
  search: createSearxngSearch,
};
