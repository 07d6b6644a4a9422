/**
 * A fake of Google's Custom Search JSON API (Programmable Search Engine) on loopback:
 * - GET /customsearch/v1?key&cx&q&num(1..10)&start(1-based; start + num ≤ 100)&dateRestrict(d|w|m|y[n])
 *   &sort(date:r:YYYYMMDD:YYYYMMDD, "restrict to range" on Google's page date)&siteSearch
 *   &siteSearchFilter(i|e)&lr(lang_xx)&hl&gl&safe
 *   (https://developers.google.com/custom-search/v1/reference/rest/v1/cse/list and the older
 *   https://developers.google.com/custom-search/json-api/v1/reference/cse/list for the start/num
 *   limits; https://developers.google.com/custom-search/docs/structured_search for sort=date);
 * - reply {kind: "customsearch#search", url, queries: {request: [...], nextPage?: [...]}, context,
 *   searchInformation: {searchTime, formattedSearchTime, totalResults (a string),
 *   formattedTotalResults}, items?: [{kind, title, htmlTitle, link, displayLink, snippet, htmlSnippet,
 *   formattedUrl, pagemap: {metatags: [...]}}]} — `items` absent when nothing matched
 *   (…/reference/rest/v1/Search); snippets start with the page date as Google shows it;
 * - errors in Google's envelope {"error": {code, message, errors: [{message, domain, reason}],
 *   status, details?}}: 400 INVALID_ARGUMENT "API key not valid" (ErrorInfo API_KEY_INVALID) for a
 *   wrong key, 403 PERMISSION_DENIED for a missing key or a project without access ("This project
 *   does not have the access to Custom Search JSON API."), 429 RESOURCE_EXHAUSTED "Quota exceeded for
 *   quota metric 'Queries' and limit 'Queries per day'…" (reason rateLimitExceeded), 500 INTERNAL
 *   (Google's error model, https://cloud.google.com/apis/design/errors; the bodies as Google sends
 *   them, captured verbatim in public code and issue threads, e.g. discuss.google.dev "Custom Search
 *   JSON API returns 403 PERMISSION_DENIED on new org").
 */
import type { ServerResponse } from 'node:http';
import { rawReply, stall } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { DAY_MS, hostOf, paramsOf, pathOf, startVendorFake, withinSite } from '../../helpers/vendor-fake.js';

export const GOOGLE_KEY = 'AIzaSyD-TEST-0123456789abcdefghijklmn';
export const GOOGLE_CX = '017576662512468239146:omuauf_lfve';

export interface GoogleDocument {
  title: string;
  link: string;
  snippet: string;
  /** Google's estimate of the page's date (YYYY-MM-DD), or an age in days: what dateRestrict and sort=date see. */
  date: string | { daysAgo: number };
  language: string;
  metatags?: Record<string, string>;
}

export const GOOGLE_DOCUMENTS: GoogleDocument[] = [
  {
    title: 'Lecture Notes | MIT OpenCourseWare',
    link: 'https://ocw.mit.edu/lecture-notes/',
    snippet: 'Jan 5, 2024 ... Lecture notes for the course, with readings.',
    date: '2024-01-05',
    language: 'en',
    metatags: { 'og:title': 'Lecture Notes', 'og:type': 'website' },
  },
  {
    title: 'Lectures &amp; talks',
    link: 'https://www.example.org/lectures',
    snippet: 'Recorded talks and lectures from the\nautumn term.',
    date: '2023-11-20',
    language: 'en',
    metatags: { 'og:type': 'article', 'article:published_time': '2023-11-20T09:30:00+01:00' },
  },
  {
    title: 'New lecture series',
    link: 'https://news.example.net/lecture-series',
    snippet: '2 days ago ... A new lecture series was announced.',
    date: { daysAgo: 2 },
    language: 'en',
  },
  ...Array.from({ length: 40 }, (_, i) => ({
    title: `Lecture ${i}`,
    link: `https://site${i % 3}.example/lecture-${i}`,
    snippet: `Lecture number ${i}.`,
    date: new Date(Date.UTC(2024, 0, 1) + i * DAY_MS).toISOString().slice(0, 10),
    language: i % 4 === 3 ? 'de' : 'en',
  })),
];

export type GoogleFailure = 'daily_quota' | 'rate_limited' | 'no_access' | 'server_error' | 'malformed' | 'not_a_search' | 'stall';

function googleError(res: ServerResponse, code: number, status: string, message: string, reason: string, extra: object = {}, headers: Record<string, string> = {}) {
  sendJson(res, code, { error: { code, message, errors: [{ message, domain: 'global', reason }], status, ...extra } }, headers);
}

const invalidArgument = (res: ServerResponse) => googleError(res, 400, 'INVALID_ARGUMENT', 'Request contains an invalid argument.', 'badRequest');

const compactDay = (text: string) => Date.UTC(Number(text.slice(0, 4)), Number(text.slice(4, 6)) - 1, Number(text.slice(6, 8)));
const UNIT_DAYS: Record<string, number> = { d: 1, w: 7, m: 31, y: 366 };

const dateOf = (document: GoogleDocument, nowMs: number) =>
  typeof document.date === 'string' ? Date.parse(`${document.date}T00:00:00Z`) : nowMs - document.date.daysAgo * DAY_MS;

function searchReply(params: URLSearchParams, corpus: readonly GoogleDocument[], nowMs: number, res: ServerResponse) {
  const q = params.get('q') ?? '';
  const num = Number(params.get('num') ?? 10);
  const start = Number(params.get('start') ?? 1);
  if (!params.get('cx') || q.trim() === '') return invalidArgument(res);
  if (!Number.isInteger(num) || num < 1 || num > 10 || !Number.isInteger(start) || start < 1 || start + num > 100) return invalidArgument(res);
  const restrict = params.get('dateRestrict');
  const restriction = restrict ? /^([dwmy])(\d+)$/.exec(restrict) : null;
  const sort = params.get('sort');
  const range = sort ? /^date:r:(\d{8}):(\d{8})$/.exec(sort) : null;
  if ((restrict && !restriction) || (sort && !range)) return invalidArgument(res);
  const from = restriction ? nowMs - Number(restriction[2]) * UNIT_DAYS[restriction[1]!]! * DAY_MS : range ? compactDay(range[1]!) : null;
  const until = range ? compactDay(range[2]!) + DAY_MS : null;
  const words = q.split(/\s+/);
  const included = words.flatMap((word) => /^\(?site:([^\s)]+)\)?$/.exec(word)?.[1] ?? []);
  const excluded = words.flatMap((word) => /^-site:(\S+)$/.exec(word)?.[1] ?? []);
  const siteSearch = params.get('siteSearch');
  if (siteSearch) (params.get('siteSearchFilter') === 'e' ? excluded : included).push(siteSearch);
  const language = params.get('lr')?.replace(/^lang_/, '');
  const matching = corpus.filter((document) => {
    if (included.length && !included.some((site) => withinSite(document.link, site))) return false;
    if (excluded.some((site) => withinSite(document.link, site))) return false;
    if (language && document.language !== language) return false;
    const date = dateOf(document, nowMs);
    return !((from !== null && date < from) || (until !== null && date >= until));
  });
  const total = Math.min(matching.length, 100);
  const items = matching.slice(start - 1, start - 1 + num).map((document) => ({
    kind: 'customsearch#result',
    title: document.title,
    htmlTitle: document.title.replace(/(Lecture)/, '<b>$1</b>'),
    link: document.link,
    displayLink: hostOf(document.link),
    snippet: document.snippet,
    htmlSnippet: document.snippet.replace(/\n/g, '<br>'),
    formattedUrl: document.link,
    htmlFormattedUrl: document.link,
    ...(document.metatags ? { pagemap: { metatags: [document.metatags] } } : {}),
  }));
  const request = { title: `Google Custom Search - ${q}`, totalResults: String(matching.length), searchTerms: q, count: num, startIndex: start, inputEncoding: 'utf8', outputEncoding: 'utf8', safe: params.get('safe') ?? 'off', cx: params.get('cx') };
  sendJson(res, 200, {
    kind: 'customsearch#search',
    url: { type: 'application/json', template: 'https://www.googleapis.com/customsearch/v1?q={searchTerms}&num={count?}&start={startIndex?}&cx={cx?}&key={key?}&alt=json' },
    queries: {
      request: [request],
      ...(start - 1 + num < total ? { nextPage: [{ ...request, startIndex: start + num }] } : {}),
    },
    context: { title: 'Test engine' },
    searchInformation: { searchTime: 0.21, formattedSearchTime: '0.21', totalResults: String(matching.length), formattedTotalResults: matching.length.toLocaleString('en-US') },
    ...(items.length ? { items } : {}),
  });
}

export async function startFakeGoogle(options: { corpus?: readonly GoogleDocument[]; now?: () => number; retryAfterSeconds?: number } = {}) {
  const corpus = options.corpus ?? GOOGLE_DOCUMENTS;
  const now = options.now ?? Date.now;
  return startVendorFake<GoogleFailure>({
    refuse: (request) => {
      if (request.method !== 'GET' || pathOf(request) !== '/customsearch/v1') return (_request, res) => googleError(res, 404, 'NOT_FOUND', 'Not Found', 'notFound');
      const key = paramsOf(request).get('key');
      if (!key) {
        const message = "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
        return (_request, res) => googleError(res, 403, 'PERMISSION_DENIED', message, 'forbidden');
      }
      if (key !== GOOGLE_KEY) {
        return (_request, res) =>
          googleError(res, 400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', 'badRequest', {
            details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'customsearch.googleapis.com' } }],
          });
      }
      return undefined;
    },
    failures: {
      daily_quota: (_request, res) => {
        const message = "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service 'customsearch.googleapis.com' for consumer 'project_number:385042346764'.";
        googleError(res, 429, 'RESOURCE_EXHAUSTED', message, 'rateLimitExceeded');
      },
      rate_limited: (_request, res) => {
        const message = "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'customsearch.googleapis.com' for consumer 'project_number:385042346764'.";
        const headers: Record<string, string> = options.retryAfterSeconds === undefined ? {} : { 'retry-after': String(options.retryAfterSeconds) };
        googleError(res, 429, 'RESOURCE_EXHAUSTED', message, 'rateLimitExceeded', {}, headers);
      },
      no_access: (_request, res) => googleError(res, 403, 'PERMISSION_DENIED', 'This project does not have the access to Custom Search JSON API.', 'forbidden'),
      server_error: (_request, res) => googleError(res, 500, 'INTERNAL', 'Internal error encountered.', 'backendError'),
      malformed: rawReply(200, '{"kind": "customsearch#search", "items": [{"title": ', 'application/json'),
      not_a_search: (_request, res) => sendJson(res, 200, { status: 'ok' }),
      stall: stall(),
    },
    answer: (request, res) => searchReply(paramsOf(request), corpus, now(), res),
  });
}
