/**
 * brave: the Brave Search API's web search, over Brave's own index.
 * GET {baseUrl}/res/v1/web/search with the key in X-Subscription-Token; the reply's `web.results`
 * are the organic results (api-dashboard.search.brave.com/api-reference/web/search/get).
 *
 * Also home of two readers the Google-style adapters share: `plainText` for snippets that carry HTML
 * highlighting and entities, and `publishedDate` for the "3 days ago" ages search engines show.
 */
import type { Freshness } from '../../api/freshness.js';
import { toIsoUtc } from '../../util/dates.js';
import { UpstreamError } from '../errors.js';
import { callJson } from '../http.js';
import { endpoint, expectArray, expectObject, objectsOf, optionalString, providerOptionsSchema, secretsOf, withQuery } from '../shared.js';
import type { ProviderSearchResult, ProviderType, SearchCall, SearchPage, SearchProvider } from '../types.js';

export interface BraveOptions {
  /** Default https://api.search.brave.com. */
  baseUrl: string;
  /** The subscription token of a Brave Search API plan. */
  apiKey: string;
  timeoutMs: number;
  /** search_lang when the request names no language, as a BCP 47 tag ("en", "pt-BR", "ja"). */
  language?: string;
  /** Where results come from: a 2-letter country code or ALL; Brave's default is US. */
  country?: string;
  /** off, moderate or strict; Brave's default is moderate. */
  safesearch?: 'off' | 'moderate' | 'strict';
}

/** Brave's documented limits: count ≤ 20, and offset is a page number 0..9. */
const MAX_COUNT = 20;
const LAST_PAGE = 9;
/**
 * Every Brave plan has a one-second rate window (X-RateLimit-Policy "1;w=1"); its X-RateLimit-Reset
 * is therefore at most a second away when a RATE_LIMITED reply carries no Retry-After.
 */
const RATE_WINDOW_MS = 1_000;

const PRESETS: Record<string, string> = { oneDay: 'pd', oneWeek: 'pw', oneMonth: 'pm', oneYear: 'py' };

function braveFreshness(freshness: Freshness): string | undefined {
  if (freshness.kind === 'preset') return PRESETS[freshness.preset];
  if (freshness.kind === 'dates') return `${freshness.startDay}to${freshness.endDay}`;
  return undefined;
}

/** The search_lang values Brave accepts; any other is a 422, so such a language is left to Brave's default. */
const SEARCH_LANGUAGES = new Set(
  'ar eu bn bg ca zh-hans zh-hant hr cs da nl en en-gb et fi fr gl de el gu he hi hu is it jp kn ko lv lt ms ml mr nb pl pt-br pt-pt pa ro ru sr sk sl es sv ta te th tr uk vi'.split(' '),
);

/** Brave's search_lang codes differ from BCP 47 for Japanese, Chinese scripts and the Portugals. */
export function braveLanguage(tag: string | null | undefined): string | undefined {
  if (!tag) return undefined;
  const lower = tag.toLowerCase();
  const primary = lower.split('-')[0]!;
  const code =
    primary === 'ja' ? 'jp'
    : primary === 'zh' ? (/-(hant|tw|hk|mo)\b/.test(lower) ? 'zh-hant' : 'zh-hans')
    : primary === 'pt' ? (/-br\b/.test(lower) ? 'pt-br' : 'pt-pt')
    : primary === 'en' && /-gb\b/.test(lower) ? 'en-gb'
    : primary === 'no' || primary === 'nn' ? 'nb'
    : primary;
  return SEARCH_LANGUAGES.has(code) ? code : undefined;
}

/** Brave's ErrorResponse: `error` in live replies, `errors[0]` in some reference examples. */
function braveErrorCode(raw: string): string | null {
  try {
    const body = JSON.parse(raw) as { error?: { code?: unknown }; errors?: Array<{ code?: unknown }> };
    const code = body.error?.code ?? body.errors?.[0]?.code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

function classifyBrave(status: number, raw: string) {
  const code = braveErrorCode(raw);
  if (code === 'QUOTA_LIMITED') return 'quota' as const; // 429, the plan's monthly quota is used up
  if (code === 'RATE_LIMITED') return 'rate_limited' as const;
  // SUBSCRIPTION_TOKEN_INVALID comes as 422, SUBSCRIPTION_NOT_FOUND as 404: both are our credentials.
  if (code?.startsWith('SUBSCRIPTION_')) return 'auth' as const;
  if (status === 422 && /x-subscription-token/i.test(raw)) return 'auth' as const; // the header is missing
  return undefined;
}

export function createBraveSearch(name: string, options: BraveOptions): SearchProvider {
  const secrets = secretsOf(options);
  return {
    name,
    capabilities: {
      maxPageSize: MAX_COUNT,
      pagination: true,
      freshness: 'all',
      includeDomains: true,
      excludeDomains: true,
      text: false,
      language: true,
    },
    async search(call: SearchCall): Promise<SearchPage> {
      if (call.page > LAST_PAGE) return { results: [], hasMore: false };
      const url = withQuery(endpoint(options.baseUrl, '/res/v1/web/search'), {
        // Included sites as site: operators joined by OR (Brave documents both, but no parentheses),
        // which it echoes in query.search_operators; excluded ones as an inline Goggle, Brave's
        // documented way to drop a site ("-site:" is not among its documented operators).
        q: withIncludedSites(call.query, call.includeDomains),
        goggles: call.excludeDomains.length ? call.excludeDomains.map((domain) => `$discard,site=${domain}`).join('\n') : undefined,
        count: call.count,
        offset: call.page,
        freshness: braveFreshness(call.freshness),
        search_lang: braveLanguage(call.language ?? options.language),
        country: options.country,
        safesearch: options.safesearch,
        result_filter: 'web',
        text_decorations: false,
      });
      let body: unknown;
      try {
        body = await callJson({
          provider: name,
          url,
          headers: { 'x-subscription-token': options.apiKey },
          timeoutMs: options.timeoutMs,
          signal: call.signal,
          secrets,
          classify: classifyBrave,
        });
      } catch (error) {
        if (error instanceof UpstreamError && error.kind === 'rate_limited' && error.retryAfterMs === undefined) {
          throw new UpstreamError(name, 'rate_limited', error.message.slice(name.length + 2), error.status, RATE_WINDOW_MS);
        }
        throw error;
      }
      return readBraveReply(name, body, call);
    },
  };
}

function withIncludedSites(query: string, includeDomains: readonly string[]): string {
  if (includeDomains.length === 0) return query;
  const sites = includeDomains.map((domain) => `site:${domain}`);
  return `${query} ${sites.length === 1 ? sites[0] : sites.join(' OR ')}`;
}

function readBraveReply(name: string, body: unknown, call: SearchCall): SearchPage {
  const reply = expectObject(name, body);
  const query = reply.query as { more_results_available?: unknown } | undefined;
  // Brave leaves out the `web` section when nothing matched; a search reply without it is an empty page.
  if (reply.web === undefined && reply.type === 'search' && query && typeof query === 'object') return { results: [], hasMore: false };
  const web = expectObject(name, reply.web, 'web section');
  const results: ProviderSearchResult[] = [];
  for (const item of objectsOf(expectArray(name, web.results, 'web.results'))) {
    if (typeof item.url !== 'string') continue;
    results.push({
      url: item.url,
      title: plainText(item.title),
      snippet: plainText(item.description),
      datePublished: optionalString(item.page_age) ?? publishedDate(item.age, call.nowMs),
    });
  }
  const more = query?.more_results_available;
  return { results, ...(typeof more === 'boolean' ? { hasMore: more && call.page < LAST_PAGE } : {}) };
}

export const braveProviderType: ProviderType = {
  optionsSchema: providerOptionsSchema('brave', {
    defaultBaseUrl: 'https://api.search.brave.com',
    apiKey: 'required',
    properties: {
      language: { type: 'string', minLength: 2 },
      country: { type: 'string', pattern: '^([A-Za-z]{2}|ALL)$' },
      safesearch: { enum: ['off', 'moderate', 'strict'] },
    },
  }),
  search: createBraveSearch,
};

// ---- shared with serper.ts and google.ts ------------------------------------------------------

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Text without HTML tags (Brave's <strong>, Google's <b>) and entities, on one line; null when empty. */
export function plainText(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = value
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, code: string) => {
      if (code[0] === '#') {
        const point = code[1] === 'x' || code[1] === 'X' ? parseInt(code.slice(2), 16) : Number(code.slice(1));
        return Number.isFinite(point) && point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : entity;
      }
      return ENTITIES[code.toLowerCase()] ?? entity;
    })
    .replace(/\s+/g, ' ')
    .trim();
  return text === '' ? null : text;
}

const UNIT_MS: Record<string, number> = {
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
  year: 365 * 86_400_000,
};
const RELATIVE_AGE = /^(an?|\d+)\s+(second|sec|minute|min|hour|hr|day|week|month|year)s?\s+ago$/i;

/**
 * A date a search engine shows, as something the gateway can read: absolute dates as given, ages
 * ("3 days ago", "an hour ago", "yesterday") turned into an instant against the request's clock,
 * since they only mean something at the moment of the reply. Anything else is no date.
 */
export function publishedDate(value: unknown, nowMs: number): string | null {
  const text = optionalString(value)?.trim();
  if (!text) return null;
  if (/^yesterday$/i.test(text)) return new Date(nowMs - UNIT_MS.day!).toISOString();
  const age = RELATIVE_AGE.exec(text);
  if (age) {
    const amount = /^an?$/i.test(age[1]!) ? 1 : Number(age[1]);
    const unit = age[2]!.toLowerCase();
    const unitMs = UNIT_MS[unit] ?? UNIT_MS[{ sec: 'second', min: 'minute', hr: 'hour' }[unit]!]!;
    return new Date(nowMs - amount * unitMs).toISOString();
  }
  return toIsoUtc(text) === null ? null : text;
}
