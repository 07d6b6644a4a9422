/**
 * A fake of the Brave Search API's web search on loopback, speaking its documented wire format:
 * - GET /res/v1/web/search?q&count(1..20)&offset(page 0..9)&freshness(pd|pw|pm|py|YYYY-MM-DDtoYYYY-MM-DD)
 *   &search_lang&country&safesearch&result_filter&text_decorations&goggles, key in X-Subscription-Token
 *   (https://api-dashboard.search.brave.com/api-reference/web/search/get; the parameter and reply
 *   tables of brave/brave-search-skills skills/web-search/SKILL.md, whose JSON example — "Top Python
 *   Web Frameworks", age "2 days ago" — is the first fixture; site: and inline Goggles `$discard,site=`
 *   from the same page);
 * - reply {type: "search", query: {original, more_results_available}, web: {type, results: [{title,
 *   url, description, age, page_age, language, meta_url, extra_snippets}], family_friendly}}; the
 *   `web` section is left out when nothing matched; descriptions carry <strong> highlights unless
 *   text_decorations=false;
 * - errors as {"type": "ErrorResponse", "error": {id, status, code, detail, meta}, "time"}: 422
 *   SUBSCRIPTION_TOKEN_INVALID, 422 VALIDATION, 429 RATE_LIMITED and 429 QUOTA_LIMITED (the 404/422/429
 *   examples of the API reference, e.g. api-reference/videos/video_search/get; the live body shape
 *   from egoist/chatwise-releases#1296), with the X-RateLimit-Limit/-Policy/-Remaining/-Reset headers of
 *   https://api.search.brave.com/app/documentation/web-search/response-headers.
 */
import type { ServerResponse } from 'node:http';
import type { ExecutionContext } from 'ava';
import { rawReply, stall } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { searchGateway } from '../../helpers/provider-gateways.js';
import { DAY_MS, hostOf, paramsOf, pathOf, startVendorFake, withinSite } from '../../helpers/vendor-fake.js';

export const BRAVE_KEY = 'BSAf4jzyvMArBuKsqwq8mtlzTESTKEY';

export interface BraveDocument {
  title: string;
  url: string;
  description: string;
  age?: string;
  page_age?: string;
  language: string;
}

/** The documented example, then pages to search, filter and page through. */
export const BRAVE_DOCUMENTS: BraveDocument[] = [
  {
    title: 'Top Python Web Frameworks',
    url: 'https://example.com/python-frameworks',
    description: 'A comprehensive guide to Python web frameworks...',
    age: '2 days ago',
    language: 'en',
  },
  {
    title: 'Flask &amp; Django compared',
    url: 'https://docs.example.org/flask-django',
    description: 'Python&#x27;s two classic frameworks, side by side.',
    page_age: '2023-04-12T14:22:41',
    age: 'April 12, 2023',
    language: 'en',
  },
  ...Array.from({ length: 48 }, (_, i) => ({
    title: `Framework note ${i}`,
    url: `https://site${i % 3}.example/note-${i}`,
    description: `Python framework note number ${i}.`,
    page_age: new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toISOString().slice(0, 19),
    language: i % 4 === 3 ? 'de' : 'en',
  })),
];

export type BraveFailure = 'rate_limited' | 'quota' | 'server_error' | 'malformed' | 'stall';

const FRESHNESS_DAYS: Record<string, number> = { pd: 1, pw: 7, pm: 31, py: 365 };
const RATE_HEADERS = {
  'x-ratelimit-limit': '1, 2000',
  'x-ratelimit-policy': '1;w=1, 2000;w=2592000',
  'x-ratelimit-remaining': '0, 1500',
  'x-ratelimit-reset': '1, 1419704',
};

function braveError(res: ServerResponse, status: number, code: string, detail: string, meta: object, headers: Record<string, string> = {}) {
  sendJson(res, status, { type: 'ErrorResponse', error: { id: crypto.randomUUID(), status, code, detail, meta }, time: Math.floor(Date.now() / 1000) }, headers);
}

const validation = (res: ServerResponse, loc: string[], msg: string) =>
  braveError(res, 422, 'VALIDATION', 'Unable to validate request parameter(s)', { errors: [{ type: 'value_error', loc, msg }] });

function dateOf(document: BraveDocument, nowMs: number): number | null {
  if (document.page_age) return Date.parse(`${document.page_age}Z`);
  const age = document.age ? /^(\d+) days? ago$/.exec(document.age) : null;
  return age ? nowMs - Number(age[1]) * DAY_MS : null;
}

function searchReply(params: URLSearchParams, corpus: readonly BraveDocument[], nowMs: number, res: ServerResponse) {
  const q = params.get('q') ?? '';
  if (q.trim() === '') return validation(res, ['query', 'q'], 'field required');
  const count = Number(params.get('count') ?? 20);
  const offset = Number(params.get('offset') ?? 0);
  if (!Number.isInteger(count) || count < 1 || count > 20) return validation(res, ['query', 'count'], 'ensure this value is less than or equal to 20');
  if (!Number.isInteger(offset) || offset < 0 || offset > 9) return validation(res, ['query', 'offset'], 'ensure this value is less than or equal to 9');
  const sites = [...q.matchAll(/(?:^|\s)site:(\S+)/g)].map((match) => match[1]!);
  const discarded = (params.get('goggles') ?? '').split('\n').flatMap((rule) => /^\$discard,site=(\S+)$/.exec(rule.trim())?.[1] ?? []);
  const freshness = params.get('freshness');
  const range = freshness && /^(\d{4}-\d{2}-\d{2})to(\d{4}-\d{2}-\d{2})$/.exec(freshness);
  if (freshness && !range && !(freshness in FRESHNESS_DAYS)) return validation(res, ['query', 'freshness'], 'invalid freshness');
  const from = range ? Date.parse(`${range[1]}T00:00:00Z`) : freshness ? nowMs - FRESHNESS_DAYS[freshness]! * DAY_MS : null;
  const until = range ? Date.parse(`${range[2]}T00:00:00Z`) + DAY_MS : null;
  const language = params.get('search_lang');
  const matching = corpus.filter((document) => {
    if (sites.length && !sites.some((site) => withinSite(document.url, site))) return false;
    if (discarded.some((site) => withinSite(document.url, site))) return false;
    if (language && document.language !== language.split('-')[0]) return false;
    if (from !== null) {
      const date = dateOf(document, nowMs);
      if (date === null || date < from || (until !== null && date >= until)) return false;
    }
    return true;
  });
  const decorate = params.get('text_decorations') !== 'false';
  const results = matching.slice(offset * count, (offset + 1) * count).map((document) => ({
    title: document.title,
    url: document.url,
    is_source_local: false,
    is_source_both: false,
    description: decorate ? document.description.replace(/\b(Python)\b/g, '<strong>$1</strong>') : document.description,
    ...(document.page_age ? { page_age: document.page_age } : {}),
    ...(document.age ? { age: document.age } : {}),
    language: document.language,
    family_friendly: true,
    type: 'search_result',
    meta_url: { scheme: 'https', netloc: hostOf(document.url), hostname: hostOf(document.url), path: new URL(document.url).pathname },
    extra_snippets: [`More about ${document.title}.`],
  }));
  sendJson(res, 200, {
    type: 'search',
    query: { original: q, show_strict_warning: false, is_navigational: false, spellcheck_off: true, more_results_available: (offset + 1) * count < matching.length && offset < 9 },
    mixed: { type: 'mixed', main: results.map((_, index) => ({ type: 'web', index, all: false })), top: [], side: [] },
    // Brave sends no web section at all when nothing matched.
    ...(results.length ? { web: { type: 'search', results, family_friendly: true } } : {}),
  });
}

export async function startFakeBrave(options: { corpus?: readonly BraveDocument[]; now?: () => number; retryAfterSeconds?: number } = {}) {
  const corpus = options.corpus ?? BRAVE_DOCUMENTS;
  const now = options.now ?? Date.now;
  const retryAfter: Record<string, string> = options.retryAfterSeconds === undefined ? {} : { 'retry-after': String(options.retryAfterSeconds) };
  return startVendorFake<BraveFailure>({
    refuse: (request) => {
      if (request.method !== 'GET' || pathOf(request) !== '/res/v1/web/search') return (_request, res) => braveError(res, 404, 'NOT_FOUND', 'Not found', {});
      const token = request.headers['x-subscription-token'];
      if (!token) return (_request, res) => validation(res, ['header', 'x-subscription-token'], 'field required');
      if (token !== BRAVE_KEY) {
        return (_request, res) => braveError(res, 422, 'SUBSCRIPTION_TOKEN_INVALID', 'The provided subscription token is invalid.', { component: 'authentication' });
      }
      return undefined;
    },
    failures: {
      rate_limited: (_request, res) =>
        braveError(res, 429, 'RATE_LIMITED', 'Request rate limit exceeded for plan.', { plan: 'Free', rate_limit: 1, rate_current: 1, quota_limit: 2000, quota_current: 15, component: 'rate_limiter' }, { ...RATE_HEADERS, ...retryAfter }),
      quota: (_request, res) =>
        braveError(res, 429, 'QUOTA_LIMITED', 'Request quota limit exceeded for plan.', { plan: 'Free', rate_limit: 1, rate_current: 0, quota_limit: 2000, quota_current: 2000, component: 'rate_limiter' }, { ...RATE_HEADERS, 'x-ratelimit-remaining': '1, 0' }),
      server_error: rawReply(500, 'Internal Server Error'),
      malformed: rawReply(200, '{"type": "search", "web": {"results": [', 'application/json'),
      stall: stall(),
    },
    answer: (request, res) => searchReply(paramsOf(request), corpus, now(), res),
  });
}

/**
 * A gateway whose search chain is searchgate's Brave provider calling a Brave fake, for the dialect
 * tests (Brave's, Bing's) that must see what reached an upstream beyond the searchgate-compatible
 * request, the language; both go when the test ends.
 */
export async function braveBackedGateway(t: ExecutionContext) {
  const brave = await startFakeBrave();
  const gateway = await searchGateway(t, brave, 'brave', { type: 'brave', baseUrl: brave.url, apiKey: BRAVE_KEY });
  return {
    gateway,
    /** The search_lang of the last search that reached the fake. */
    lastSearchLanguage: () => brave.params(brave.requests.length - 1).get('search_lang'),
  };
}
