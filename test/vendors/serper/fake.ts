/**
 * A fake of Serper's Google search API on loopback, speaking its wire format:
 * - POST /search with X-API-KEY and a JSON body {q, num (1..100, default 10), page (1-based), gl, hl,
 *   tbs ("qdr:d|w|m|y" or Google's "cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY")} → {searchParameters: {q,
 *   gl, hl, type: "search", num, page, engine: "google"}, knowledgeGraph?, organic: [{title, link,
 *   snippet, sitelinks?, date?, position}], relatedSearches, credits}
 *   (Serper publishes no reference beyond its playground at serper.dev/playground; this follows the
 *   OpenAPI description api-evangelist/serper openapi/serper-google-search-api-openapi.yml — the
 *   "google search" example with its knowledge graph and sitelinks is the first fixture — and the
 *   field list of exiao/skills web-search/SKILL.md; `site:` and tbs are Google's own operators,
 *   which Serper passes through);
 * - errors as {"message", "statusCode"}: 403 {"message": "Unauthorized.", "statusCode": 403} for a
 *   missing or wrong key (as reported verbatim in crewAIInc/crewAI#633 and MiroMindAI/MiroFlow#7),
 *   400 "Not enough credits" when the balance is used up, 429 when rate-limited, 500.
 */
import type { ServerResponse } from 'node:http';
import { rawReply, stall } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { DAY_MS, pathOf, startVendorFake, withinSite } from '../../helpers/vendor-fake.js';

export const SERPER_KEY = '8fab4b24ee718778ea9f17114a5cTESTKEY';

interface SerperDocument {
  title: string;
  link: string;
  snippet: string;
  /** As Google shows it: "Jan 5, 2024" or an age such as "3 days ago". */
  date?: string;
  sitelinks?: Array<{ title: string; link: string }>;
}

export const SERPER_DOCUMENTS: SerperDocument[] = [
  {
    title: 'Google',
    link: 'https://www.google.com/',
    snippet: "Search the world's information...",
    sitelinks: [{ title: 'Images', link: 'https://images.google.com/' }],
  },
  {
    title: 'How Search works',
    link: 'https://www.google.com/search/howsearchworks/',
    snippet: 'Google Search uses automated software known as web crawlers...',
    date: '3 days ago',
  },
  ...Array.from({ length: 38 }, (_, i) => ({
    title: `Search note ${i}`,
    link: `https://site${i % 3}.example/note-${i}`,
    snippet: `Note number ${i} about search &amp; engines.`,
    date: new Date(Date.UTC(2024, 0, 1) + i * 86_400_000).toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' }),
  })),
];

export type SerperFailure = 'rate_limited' | 'credits' | 'server_error' | 'malformed' | 'stall';

const QDR_DAYS: Record<string, number> = { d: 1, w: 7, m: 31, y: 366 };

const serperError = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) =>
  sendJson(res, status, { message, statusCode: status }, headers);

/** Google's US-style date, M/D/YYYY, as UTC midnight. */
const usDay = (text: string) => {
  const [month, day, year] = text.split('/').map(Number);
  return Date.UTC(year!, month! - 1, day!);
};

function dateOf(document: SerperDocument, nowMs: number): number | null {
  if (!document.date) return null;
  const age = /^(\d+) days? ago$/.exec(document.date);
  return age ? nowMs - Number(age[1]) * DAY_MS : Date.parse(`${document.date} UTC`);
}

/** [from, until) for a tbs value; undefined when there is none; null when it is not one Google knows. */
function window(tbs: unknown, nowMs: number): [number, number] | undefined | null {
  if (tbs === undefined || tbs === '') return undefined;
  if (typeof tbs !== 'string') return null;
  const qdr = /^qdr:([dwmy])$/.exec(tbs);
  if (qdr) return [nowMs - QDR_DAYS[qdr[1]!]! * DAY_MS, Number.POSITIVE_INFINITY];
  const cdr = /^cdr:1,cd_min:(\d{1,2}\/\d{1,2}\/\d{4}),cd_max:(\d{1,2}\/\d{1,2}\/\d{4})$/.exec(tbs);
  return cdr ? [usDay(cdr[1]!), usDay(cdr[2]!) + DAY_MS] : null;
}

function searchReply(body: any, corpus: readonly SerperDocument[], nowMs: number, res: ServerResponse) {
  if (typeof body?.q !== 'string' || body.q.trim() === '') return serperError(res, 400, 'Missing query parameter');
  const num = body.num ?? 10;
  const page = body.page ?? 1;
  if (!Number.isInteger(num) || num < 1 || num > 100 || !Number.isInteger(page) || page < 1) return serperError(res, 400, 'Invalid num or page');
  const range = window(body.tbs, nowMs);
  if (range === null) return serperError(res, 400, 'Invalid tbs');
  const words = (body.q as string).split(/\s+/);
  const included = words.flatMap((word) => /^\(?site:([^\s)]+)\)?$/.exec(word)?.[1] ?? []);
  const excluded = words.flatMap((word) => /^-site:(\S+)$/.exec(word)?.[1] ?? []);
  const matching = corpus.filter((document) => {
    if (included.length && !included.some((site) => withinSite(document.link, site))) return false;
    if (excluded.some((site) => withinSite(document.link, site))) return false;
    if (range) {
      const date = dateOf(document, nowMs);
      if (date === null || date < range[0] || date >= range[1]) return false;
    }
    return true;
  });
  const organic = matching.slice((page - 1) * num, page * num).map((document, index) => ({
    title: document.title,
    link: document.link,
    snippet: document.snippet,
    ...(document.sitelinks ? { sitelinks: document.sitelinks } : {}),
    ...(document.date ? { date: document.date } : {}),
    position: (page - 1) * num + index + 1,
  }));
  sendJson(res, 200, {
    searchParameters: { q: body.q, ...(body.gl ? { gl: body.gl } : {}), ...(body.hl ? { hl: body.hl } : {}), ...(body.tbs ? { tbs: body.tbs } : {}), type: 'search', num, page, engine: 'google' },
    ...(page === 1
      ? {
          knowledgeGraph: {
            title: 'Google Search',
            type: 'Website',
            website: 'https://google.com/',
            description: 'Google Search is a search engine provided and operated by Google.',
            descriptionSource: 'Wikipedia',
            descriptionLink: 'https://en.wikipedia.org/wiki/Google_Search',
          },
        }
      : {}),
    organic,
    relatedSearches: [{ query: 'google search engine' }],
    credits: 1,
  });
}

export async function startFakeSerper(options: { corpus?: readonly SerperDocument[]; now?: () => number; retryAfterSeconds?: number } = {}) {
  const corpus = options.corpus ?? SERPER_DOCUMENTS;
  const now = options.now ?? Date.now;
  return startVendorFake<SerperFailure>({
    refuse: (request) => (request.headers['x-api-key'] === SERPER_KEY ? undefined : (_request, res) => serperError(res, 403, 'Unauthorized.')),
    failures: {
      rate_limited: (_request, res) =>
        serperError(res, 429, 'Too many requests', options.retryAfterSeconds === undefined ? {} : { 'retry-after': String(options.retryAfterSeconds) }),
      credits: (_request, res) => serperError(res, 400, 'Not enough credits'),
      server_error: (_request, res) => serperError(res, 500, 'Internal server error'),
      malformed: rawReply(200, '<html><body>502 Bad Gateway</body></html>', 'text/html'),
      stall: stall(),
    },
    answer: (request, res) => {
      if (request.method === 'POST' && pathOf(request) === '/search') return searchReply(request.body, corpus, now(), res);
      serperError(res, 404, 'Not found');
    },
  });
}
