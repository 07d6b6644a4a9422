/**
 * What every upstream adapter needs and none should write again: the options every HTTP provider
 * takes, the declaration of what a search upstream supports, one way to call a vendor's JSON API
 * (URL, credentials, error reading, secrets), reading a reply defensively (a reply of the wrong shape
 * is `garbage`, never an empty result), snippets' HTML as text, language tags, and the translations
 * of our filters into the forms upstreams understand (site: operators, date ranges).
 */
import { compile } from 'html-to-text';
import { freshnessWindow, type Freshness, type FreshnessPreset } from '../api/freshness.js';
import { UpstreamError } from './errors.js';
import { callJson, envelopeError, type Classify } from './http.js';
import type { ProviderSearchResult, SearchCapabilities } from './types.js';

/** Options every HTTP provider has. */
interface HttpProviderOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
}

/**
 * The JSON Schema of one provider type's options: `type`, `baseUrl` (default: the provider's public
 * endpoint), `apiKey` (required where the upstream needs one), `timeoutMs`, plus the adapter's own.
 */
export function providerOptionsSchema(
  type: string,
  spec: {
    defaultBaseUrl?: string;
    apiKey: 'required' | 'optional' | 'none';
    timeoutMs?: number;
    properties?: Record<string, object>;
    required?: string[];
  },
): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: [...(spec.apiKey === 'required' ? ['apiKey'] : []), ...(spec.defaultBaseUrl ? [] : ['baseUrl']), ...(spec.required ?? [])],
    properties: {
      type: { const: type },
      baseUrl: { type: 'string', pattern: '^https?://', ...(spec.defaultBaseUrl ? { default: spec.defaultBaseUrl } : {}) },
      ...(spec.apiKey === 'none' ? {} : { apiKey: { type: 'string', minLength: 1 } }),
      timeoutMs: { type: 'integer', minimum: 1, default: spec.timeoutMs ?? 10_000 },
      ...spec.properties,
    },
  };
}

/**
 * A search upstream's capabilities, declared SearXNG-style: whatever an adapter does not declare it
 * does not support, so the gateway does that part itself (filters, paging, dates). Only the page
 * size has no safe default.
 */
export function searchCapabilities(declared: Partial<SearchCapabilities> & Pick<SearchCapabilities, 'maxPageSize'>): SearchCapabilities {
  return {
    pagination: false,
    freshness: 'none',
    includeDomains: false,
    excludeDomains: false,
    text: false,
    ...declared,
  };
}

/** The values an error message must never show. */
export const secretsOf = (options: { apiKey?: string | undefined }): string[] => (options.apiKey ? [options.apiKey] : []);

export function bearer(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

/** baseUrl + path, whatever slashes the operator wrote. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

type QueryParameters = Record<string, string | number | boolean | undefined | null | readonly string[]>;

/** A URL with query parameters; undefined, null and empty values are left out, arrays repeat the key. */
export function withQuery(url: string, params: QueryParameters): string {
  const target = new URL(url);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const item of value) target.searchParams.append(key, item);
    else target.searchParams.set(key, String(value));
  }
  return target.toString();
}

/** An error a vendor reports inside a 2xx reply: the HTTP status it names, and its own explanation. */
export interface EnvelopeFailure {
  code: number;
  detail: string;
  retryAfterMs?: number;
}

/** What is the same in every call to one vendor's API. */
export interface Vendor {
  /** The credentials headers for the configured key (sent only when a key is configured). */
  auth?: (apiKey: string) => Record<string, string>;
  /** Headers every call sends: a User-Agent the vendor requires, an operator's proxy headers. */
  headers?: Record<string, string>;
  /** The vendor's own reading of a non-2xx reply (see JsonCall.classify). */
  classify?: Classify;
  /** What no error message may show; default: the API key. */
  secrets?: readonly string[];
  /** See JsonCall.rateLimitWindowMs. */
  rateLimitWindowMs?: number;
  /**
   * The failure a 2xx JSON object reply carries in its envelope, for vendors that report errors
   * that way (LangSearch, Jina); null for a real answer. Read here, not by each call, so that no
   * call can take such a reply for content or for no results.
   */
  envelope?: (body: Record<string, unknown>) => EnvelopeFailure | null;
}

/** One call: a path under the provider's baseUrl, and what varies from call to call. */
export interface VendorRequest {
  query?: QueryParameters;
  body?: unknown;
  headers?: Record<string, string>;
  signal: AbortSignal;
  /** Asked before the vendor's classify: a reading that belongs to this call (a page's own failure). */
  classify?: Classify;
}

export interface VendorClient {
  /** A call whose reply must be a JSON object. */
  (path: string, request: VendorRequest): Promise<Record<string, unknown>>;
  /** A call whose reply may be any JSON value (TEI answers a bare array). */
  json(path: string, request: VendorRequest): Promise<unknown>;
}

/**
 * The calls one provider makes to its vendor's JSON API, through callJson: baseUrl + path (+ query),
 * the vendor's credentials and headers, its error classification (of statuses and of envelopes), the
 * provider's timeout, and its secrets cut out of every error message.
 */
export function vendorClient(provider: string, options: HttpProviderOptions, vendor: Vendor = {}): VendorClient {
  const secrets = vendor.secrets ?? secretsOf(options);
  const authHeaders = options.apiKey && vendor.auth ? vendor.auth(options.apiKey) : {};
  const json = async (path: string, request: VendorRequest): Promise<unknown> => {
    const classify: Classify = (status, rawBody, body) => request.classify?.(status, rawBody, body) ?? vendor.classify?.(status, rawBody, body);
    const reply = await callJson({
      provider,
      url: withQuery(endpoint(options.baseUrl, path), request.query ?? {}),
      headers: { ...authHeaders, ...vendor.headers, ...request.headers },
      body: request.body,
      timeoutMs: options.timeoutMs,
      signal: request.signal,
      secrets,
      classify,
      ...(vendor.rateLimitWindowMs === undefined ? {} : { rateLimitWindowMs: vendor.rateLimitWindowMs }),
    });
    const failure = vendor.envelope && isRecord(reply) ? vendor.envelope(reply) : null;
    if (failure) {
      // The envelope stands in for the reply's body, so that a call's own classify can read it as it
      // would an error reply's (a page's failure by its error name).
      throw envelopeError(provider, failure.code, failure.detail, secrets, {
        classify: (status) => classify(status, '', reply),
        retryAfterMs: failure.retryAfterMs,
      });
    }
    return reply;
  };
  const call = async (path: string, request: VendorRequest) => expectObject(provider, await json(path, request));
  return Object.assign(call, { json });
}

/**
 * A call for one page's content in which a failure `pageFailed` recognises as the page's own
 * (unreachable, blocked, too slow at the upstream) resolves to null instead of throwing, so that the
 * gateway counts it as "no text for this page" and not against the provider's health. `send` makes
 * the call with the classify it is given.
 */
export async function unlessPageFailed<T>(
  pageFailed: (status: number, body: unknown) => boolean,
  send: (classify: Classify) => Promise<T>,
): Promise<T | null> {
  let failedPage = false;
  try {
    return await send((status, _rawBody, body) => ((failedPage = pageFailed(status, body)) ? 'bad_request' : undefined));
  } catch (error) {
    if (failedPage) return null;
    throw error;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

export function expectObject(provider: string, value: unknown, what = 'reply'): Record<string, unknown> {
  if (!isRecord(value)) {
    throw new UpstreamError(provider, 'garbage', `${what} is not a JSON object`);
  }
  return value;
}

export function expectArray(provider: string, value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new UpstreamError(provider, 'garbage', `reply has no ${what} array`);
  return value;
}

/** The items of an array that are objects; an upstream's stray null or string is skipped, not fatal. */
export function objectsOf(items: readonly unknown[]): Array<Record<string, unknown>> {
  return items.filter(isRecord);
}

/**
 * An upstream's list of results as ours: `toResult` reads one item, null for an item it cannot use
 * (no URL); items that are not objects are skipped too. A missing list is `garbage`.
 */
export function readResults<Result extends ProviderSearchResult>(
  provider: string,
  list: unknown,
  what: string,
  toResult: (item: Record<string, unknown>) => Result | null,
): Result[] {
  return objectsOf(expectArray(provider, list, what))
    .map(toResult)
    .filter((result): result is Result => result !== null);
}

/**
 * The reader, for readResults, of results whose fields are plain strings under the vendor's own
 * names: `url` must be a string, every other field is optionalString of the vendor field named.
 */
export function stringFields(
  fields: { [Field in Exclude<keyof ProviderSearchResult, 'url' | 'relevance'>]?: string },
): (item: Record<string, unknown>) => ProviderSearchResult | null {
  const named = Object.entries(fields) as Array<[keyof typeof fields, string]>;
  return (item) => {
    if (typeof item.url !== 'string') return null;
    const result: ProviderSearchResult = { url: item.url };
    for (const [field, vendorField] of named) result[field] = optionalString(item[vendorField]);
    return result;
  };
}

export const optionalString = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);
export const optionalNumber = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

const htmlToText = compile({
  wordwrap: false,
  // html-to-text recurses per nesting level; absurdly deep markup would overflow the stack.
  limits: { maxDepth: 100 },
  selectors: [
    // Snippets are one line of text: no link targets, images or shouting headings.
    { selector: 'a', options: { ignoreHref: true } },
    { selector: 'img', format: 'skip' },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
  ],
});

/**
 * An HTML fragment from a reply (Brave's <strong>, Google's <b>, MediaWiki's <span class="searchmatch">,
 * and their entities) as plain text on one line; null when it holds no text. Only for fields that are
 * HTML: plain text read as HTML would lose a literal "<" or "&lt;".
 */
export function plainText(html: unknown): string | null {
  if (typeof html !== 'string') return null;
  const text = htmlToText(html).replace(/\s+/g, ' ').trim();
  return text === '' ? null : text;
}

/** Markdown read as text: images dropped, links reduced to their anchor text, reference definitions removed. */
export function markdownToText(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, '')
    .replace(/\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, '$1')
    .replace(/^ {0,3}\[[^\]]+\]:\s+\S+.*$/gm, '')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

interface LanguageSubtags {
  language: string;
  /** Title case ("Hant"), or null. */
  script: string | null;
  /** Upper case ("TW"), or null. */
  region: string | null;
}

/** A BCP 47 tag's language, script and region ("zh-Hant-TW" → zh, Hant, TW); null for what is not a language tag. */
export function languageSubtags(tag: string | null | undefined): LanguageSubtags | null {
  const [primary, ...rest] = (tag ?? '').trim().split(/[-_]/);
  if (!primary || !/^[a-z]{2,3}$/i.test(primary)) return null;
  const script = rest.find((part) => /^[a-z]{4}$/i.test(part));
  const region = rest.find((part) => /^[a-z]{2}$/i.test(part));
  return {
    language: primary.toLowerCase(),
    script: script ? script[0]!.toUpperCase() + script.slice(1).toLowerCase() : null,
    region: region ? region.toUpperCase() : null,
  };
}

/** Whether a Chinese tag asks for Traditional characters: the Hant script, or Taiwan, Hong Kong or Macao. */
export const isTraditionalChinese = ({ script, region }: LanguageSubtags): boolean =>
  script === 'Hant' || region === 'TW' || region === 'HK' || region === 'MO';

/**
 * Domain filters as search operators, for engines that understand `site:` but take no filter
 * parameter: `query (site:a.com OR site:b.com) -site:c.com`.
 */
export function withSiteOperators(query: string, includeDomains: readonly string[], excludeDomains: readonly string[]): string {
  const parts = [query];
  if (includeDomains.length === 1) parts.push(`site:${includeDomains[0]}`);
  else if (includeDomains.length > 1) parts.push(`(${includeDomains.map((domain) => `site:${domain}`).join(' OR ')})`);
  for (const domain of excludeDomains) parts.push(`-site:${domain}`);
  return parts.join(' ');
}

/** The period names most APIs give the presets (SearXNG's and Tavily's time_range). */
export const PRESET_PERIODS: Readonly<Record<FreshnessPreset, 'day' | 'week' | 'month' | 'year'>> = {
  oneDay: 'day',
  oneWeek: 'week',
  oneMonth: 'month',
  oneYear: 'year',
};

/** The freshness window as ISO 8601 instants, for APIs that filter on timestamps; null for noLimit. */
export function freshnessInstants(freshness: Freshness, nowMs: number): { start: string; end: string | null } | null {
  const window = freshnessWindow(freshness, nowMs);
  if (!window) return null;
  return {
    start: new Date(window.fromMs).toISOString(),
    end: Number.isFinite(window.toMs) ? new Date(window.toMs).toISOString() : null,
  };
}
