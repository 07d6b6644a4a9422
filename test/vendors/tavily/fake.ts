/**
 * A fake of Tavily's API on loopback, speaking its documented wire format:
 * - POST /search {query, max_results (0..20), search_depth, topic, time_range, start_date,
 *   end_date, include_domains, exclude_domains, include_raw_content, include_answer} →
 *   {query, answer, images, results: [{title, url, content, score, raw_content, favicon,
 *   published_date (news topic only)}], response_time, request_id}
 *   (https://docs.tavily.com/documentation/api-reference/endpoint/search; its response example,
 *   Leo Messi / Britannica, is the first fixture; https://help.tavily.com/articles/3347142954-best-practices
 *   for the date filters);
 * - POST /extract {urls, extract_depth, format} → {results: [{url, raw_content, images, favicon}],
 *   failed_results: [{url, error}], response_time, request_id}
 *   (https://docs.tavily.com/documentation/api-reference/endpoint/extract and its example);
 * - `Authorization: Bearer tvly-…`; errors as {"detail": {"error": "…"}} with Tavily's statuses and
 *   messages: 400, 401, 429, 432 (plan limit), 433 (pay-as-you-go limit), 500
 *   (https://help.tavily.com/articles/8645538886-understanding-http-errors; tavily-ai/tavily-js
 *   src/utils.ts reads detail.error).
 */
import type { ServerResponse } from 'node:http';
import { rawReply, stall } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { DAY_MS, pathOf, startVendorFake, withinSite } from '../../helpers/vendor-fake.js';

export const TAVILY_KEY = 'tvly-dev-0123456789abcdefTEST';

export interface TavilyDocument {
  title: string;
  url: string;
  content: string;
  score: number;
  rawContent: string;
  favicon?: string;
  /** Known to Tavily for news pages; sent as published_date only under topic "news". */
  publishedDate?: string;
}

export const TAVILY_DOCUMENTS: TavilyDocument[] = [
  {
    title: 'Lionel Messi Facts | Britannica',
    url: 'https://www.britannica.com/facts/Lionel-Messi',
    content:
      'Lionel Messi, an Argentine footballer, is widely regarded as one of the greatest football players of his generation. Born in 1987, Messi spent the majority of his career playing for Barcelona, where he won numerous domestic league titles and UEFA Champions League titles. Messi is known for his exceptional dribbling skills, vision, and goal',
    score: 0.81025416,
    rawContent: 'Lionel Messi, in full Lionel Andrés Messi, also called Leo Messi, (born June 24, 1987, Rosario, Argentina), Argentine-born football (soccer) player.',
    favicon: 'https://britannica.com/favicon.png',
    publishedDate: 'Mon, 10 Feb 2025 20:51:49 GMT',
  },
  {
    title: 'Lionel Messi - Wikipedia',
    url: 'https://en.wikipedia.org/wiki/Lionel_Messi',
    content: 'Lionel Andrés "Leo" Messi is an Argentine professional footballer who plays as a forward for and captains both Major League Soccer club Inter Miami and the Argentina national team.',
    score: 0.7,
    rawContent: 'Lionel Andrés "Leo" Messi (born 24 June 1987) is an Argentine professional footballer.',
    publishedDate: 'Tue, 04 Feb 2025 08:00:00 GMT',
  },
  {
    title: 'Messi signs new Inter Miami deal',
    url: 'https://www.espn.com/soccer/story/messi-inter-miami',
    content: 'Lionel Messi has signed a contract extension with Inter Miami.',
    score: 0.6,
    rawContent: 'Lionel Messi has signed a contract extension with Inter Miami, the club announced on Thursday.',
    publishedDate: 'Thu, 23 Oct 2025 17:12:00 GMT',
  },
];

export type TavilyFailure = 'rate_limited' | 'plan_limit' | 'pay_as_you_go_limit' | 'server_error' | 'malformed' | 'stall';

const requestId = () => crypto.randomUUID();
const TIME_RANGE_DAYS: Record<string, number> = { day: 1, d: 1, week: 7, w: 7, month: 30, m: 30, year: 365, y: 365 };

function tavilyError(res: ServerResponse, status: number, error: string, headers: Record<string, string> = {}) {
  sendJson(res, status, { detail: { error } }, headers);
}

function searchReply(body: any, corpus: readonly TavilyDocument[], nowMs: number, res: ServerResponse) {
  if (typeof body?.query !== 'string' || body.query.trim() === '') return tavilyError(res, 400, 'Query is missing.');
  const maxResults = body.max_results ?? 5;
  if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > 20) return tavilyError(res, 400, 'max_results must be between 0 and 20.');
  const topic = body.topic ?? 'general';
  if (!['general', 'news', 'finance'].includes(topic)) return tavilyError(res, 400, `Invalid topic. Must be 'general', 'news' or 'finance'.`);
  if (body.time_range !== undefined && !(body.time_range in TIME_RANGE_DAYS)) return tavilyError(res, 400, 'Invalid time_range.');
  const from = body.time_range ? nowMs - TIME_RANGE_DAYS[body.time_range]! * DAY_MS : body.start_date ? Date.parse(`${body.start_date}T00:00:00Z`) : null;
  const until = body.end_date ? Date.parse(`${body.end_date}T00:00:00Z`) + DAY_MS : null;
  const include: string[] = body.include_domains ?? [];
  const exclude: string[] = body.exclude_domains ?? [];
  const results = corpus
    .filter((document) => {
      if (include.length && !include.some((domain) => withinSite(document.url, domain))) return false;
      if (exclude.some((domain) => withinSite(document.url, domain))) return false;
      if (from !== null || until !== null) {
        const published = document.publishedDate ? Date.parse(document.publishedDate) : null;
        if (published === null || (from !== null && published < from) || (until !== null && published >= until)) return false;
      }
      return true;
    })
    .slice(0, maxResults)
    .map((document) => ({
      title: document.title,
      url: document.url,
      content: document.content,
      score: document.score,
      raw_content: body.include_raw_content ? document.rawContent : null,
      favicon: document.favicon ?? null,
      ...(topic === 'news' && document.publishedDate ? { published_date: document.publishedDate } : {}),
    }));
  sendJson(res, 200, {
    query: body.query,
    answer: body.include_answer ? 'An answer nobody asked for.' : null,
    images: [],
    results,
    response_time: '1.67',
    request_id: requestId(),
  });
}

function extractReply(body: any, corpus: readonly TavilyDocument[], res: ServerResponse) {
  const urls: unknown = typeof body?.urls === 'string' ? [body.urls] : body?.urls;
  if (!Array.isArray(urls) || urls.length === 0) return tavilyError(res, 400, 'urls is missing.');
  const results: Array<Record<string, unknown>> = [];
  const failed: Array<Record<string, unknown>> = [];
  for (const url of urls as string[]) {
    const document = corpus.find((candidate) => candidate.url === url);
    if (document) results.push({ url, raw_content: document.rawContent, images: [], favicon: document.favicon ?? null });
    else failed.push({ url, error: 'Failed to fetch url' });
  }
  sendJson(res, 200, { results, failed_results: failed, response_time: 0.02, request_id: requestId() });
}

export async function startFakeTavily(options: { corpus?: readonly TavilyDocument[]; now?: () => number; retryAfterSeconds?: number } = {}) {
  const corpus = options.corpus ?? TAVILY_DOCUMENTS;
  const now = options.now ?? Date.now;
  return startVendorFake<TavilyFailure>({
    refuse: (request) =>
      request.headers.authorization === `Bearer ${TAVILY_KEY}` ? undefined : (_request, res) => tavilyError(res, 401, 'Unauthorized: missing or invalid API key.'),
    failures: {
      rate_limited: (_request, res) =>
        tavilyError(res, 429, 'Your request has been blocked due to excessive requests. Please reduce rate of requests.', {
          'retry-after': String(options.retryAfterSeconds ?? 9),
        }),
      plan_limit: (_request, res) =>
        tavilyError(res, 432, "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com."),
      pay_as_you_go_limit: (_request, res) =>
        tavilyError(res, 433, 'This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily dashboard.'),
      server_error: (_request, res) => tavilyError(res, 500, 'Internal Server Error'),
      malformed: rawReply(200, '{"query": "who is Leo Messi?", "results": ', 'application/json'),
      stall: stall(),
    },
    answer: (request, res) => {
      const path = pathOf(request);
      if (request.method === 'POST' && path === '/search') return searchReply(request.body, corpus, now(), res);
      if (request.method === 'POST' && path === '/extract') return extractReply(request.body, corpus, res);
      tavilyError(res, 404, 'Not Found');
    },
  });
}
