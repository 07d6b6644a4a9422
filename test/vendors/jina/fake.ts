/**
 * A fake of Jina AI's three hosts on one loopback server, each under its own prefix so that one
 * `jina` provider block points its three base URLs at it: /s (s.jina.ai, search), /r (r.jina.ai,
 * Reader), /api (api.jina.ai, rerank).
 *
 * Sources:
 * - jina-ai/meta-prompt v14.txt (the text docs.jina.ai serves): Search API POST https://s.jina.ai/
 *   body {q, gl, location, hl, num, page}, headers X-Site, X-Respond-With: no-content,
 *   X-Return-Format; Reader API POST https://r.jina.ai/ body {url}, X-Return-Format, X-Retain-Images,
 *   X-Md-Link-Style (`discarded` replaces links with their anchor text); Reranker API POST
 *   https://api.jina.ai/v1/rerank {model, query, documents, top_n, return_documents (default true)}.
 * - jina-ai/reader src/api/serp.ts and src/api/searcher-serper.ts: num 0…20, page is the SERP's
 *   1-based page number; no hits answer 422 AssertionFailureError "No search results available for
 *   query …"; src/services/serper-search.ts: X-Site values split on ", " and OR-ed as site:
 *   operators; src/dto/crawler-options.ts: X-Respond-With and X-Return-Format name one setting;
 *   README: `text` is document.body.innerText, the default `content` is Readability's Markdown.
 * - Error envelope {data: null, code, name, status, message, readableMessage}: jina-ai/reader
 *   src/services/errors.ts (InsufficientBalanceError 40203, RateLimitTriggeredError 42903 with
 *   Retry-After, SecurityCompromiseError 45102, AbuseAlleviationError); verbatim bodies seen in
 *   public code: 402 "Account balance not enough to run this query, please recharge.", 401
 *   AuthenticationRequiredError 40103, 422 "Failed to goto …: TimeoutError: Navigation timeout of
 *   30000 ms exceeded", 429 {retryAfter} ; the Reader's 200 with warning "Target URL returned error
 *   404: Not Found" for an error page. The wrong-key name (AuthenticationFailedError 40101), the 5xx
 *   body and api.jina.ai's {"detail"} error shape are assumptions: no public example was found.
 * - The rerank reply example of jinaai/jina-reranker-v2-base-multilingual's model card and
 *   jina.ai/reranker: {model, usage: {total_tokens}, results: [{index, document: {text},
 *   relevance_score}]}, scores in (0, 1).
 * - The search fixtures are the documented reply of jina-ai/reader issue #1232 (X-Respond-With:
 *   no-content, results with "date": "Oct 17, 2025").
 */
import type { ServerResponse } from 'node:http';
import { rawReply, stall, type Fault } from '../../helpers/faults.js';
import { sendJson, type RecordedRequest } from '../../helpers/gateway.js';
import { hostOf, pathOf, startVendorFake, withinSite } from '../../helpers/vendor-fake.js';

export const JINA_KEY = 'jina_3f9c0e0b5d2a4c6e8f1a2b3c4d5e6f70TESTKEY';

export interface JinaResult {
  title: string;
  url: string;
  description: string;
  /** The SERP's date, as Google shows it. */
  date?: string;
  publishedTime?: string;
  /** Readability's main content as Markdown. */
  content: string;
  /** document.body.innerText. */
  text: string;
}

const page = (title: string, url: string, description: string, extra: Partial<JinaResult> = {}): JinaResult => ({
  title,
  url,
  description,
  content: `# ${title}\n\n${description}`,
  text: `Home | News | About\n${title}\n${description}\n© Footer`,
  ...extra,
});

/** The documented example first, then pages on several domains to filter and page through. */
export const JINA_CORPUS: JinaResult[] = [
  page('Lilium News and Updates - Newsroom and Media Kit', 'https://lilium.com/news', '05.12.2024 - Media Release. Lilium GmbH reports continuing momentum on the Lilium Jet commercial and test program, as KPMG-driven M&A process continues.'),
  page(
    'Technology of the now-defunct electric aircraft startup Lilium has ...',
    'https://www.techi.com/archer-acquires-lilium-patents-electric-aircraft-future/',
    "Archer Aviation acquires Lilium's patents for €18 million, gaining access to key technologies in electric flight.",
    { date: 'Oct 17, 2025' },
  ),
  page(
    "Defunct electric aircraft startup Lilium's tech lives on over at Archer",
    'https://techcrunch.com/2025/10/16/defunct-electric-aircraft-startup-liliums-tech-lives-on-over-at-archer/',
    'Lilium, which was founded in 2015, was developing a vertical take-off and landing aircraft with speeds of up to 100 km/h. The company raised ...',
    { date: 'Oct 16, 2025', publishedTime: '2025-10-16T17:05:00+00:00' },
  ),
  ...Array.from({ length: 57 }, (_, i) =>
    page(`Lilium archive note ${i}`, `https://${['archive.example', 'news.example.org', 'blog.example.net'][i % 3]}/lilium/${i}`, `Archived note ${i} about Lilium.`, {
      date: new Date(Date.UTC(2025, 0, 1) + i * 86_400_000).toISOString().slice(0, 10),
    }),
  ),
];

/** What the Reader finds at a URL. */
export type ReaderPage =
  | { kind: 'ok'; title: string; content: string; text: string; publishedTime?: string }
  | { kind: 'unreachable' }
  | { kind: 'blocked' }
  | { kind: 'target404' };

export type JinaFault = 'rate_limited' | 'quota' | 'quota_in_200' | 'server_error' | 'malformed' | 'wrong_shape' | 'stall';

const envelope = (res: ServerResponse, code: number, name: string, status: number, message: string, extra: object = {}, headers: Record<string, string> = {}) =>
  sendJson(res, code, { data: null, code, name, status, message, readableMessage: `${name}: ${message}`, ...extra }, headers);

const words = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** The fake reranker: the sigmoid of a logit that grows with the share of query words a document contains, as v2 answers. */
export function jinaScore(query: string, document: string): number {
  const terms = [...new Set(words(query))];
  const present = new Set(words(document));
  const share = terms.length ? terms.filter((term) => present.has(term)).length / terms.length : 0;
  return 1 / (1 + Math.exp(-(8 * share - 4)));
}

function search(request: RecordedRequest, corpus: readonly JinaResult[], res: ServerResponse) {
  const body = (request.body ?? {}) as { q?: unknown; num?: unknown; page?: unknown };
  if (typeof body.q !== 'string' || !body.q.trim()) return envelope(res, 400, 'ParamValidationError', 40001, 'q: Required but not provided');
  const num = body.num ?? 10;
  const pageNumber = body.page ?? 1;
  if (typeof num !== 'number' || !Number.isInteger(num) || num < 0 || num > 20) return envelope(res, 400, 'ParamValidationError', 40001, 'num: Validation failed');
  if (typeof pageNumber !== 'number' || !Number.isInteger(pageNumber) || pageNumber < 1) return envelope(res, 400, 'ParamValidationError', 40001, 'page: Validation failed');
  // The Google SERP behind s.jina.ai: -site: operators exclude, X-Site restricts, the words must appear.
  const excluded = [...body.q.matchAll(/(?:^|\s)-site:(\S+)/g)].map((match) => match[1]!);
  const terms = words(body.q.replace(/(?:^|\s)-site:\S+/g, ' '));
  const sites = String(request.headers['x-site'] ?? '').split(', ').filter(Boolean);
  const matching = corpus.filter((result) => {
    if (sites.length && !sites.some((site) => withinSite(result.url, site))) return false;
    if (excluded.some((site) => withinSite(result.url, site))) return false;
    const haystack = new Set(words(`${result.title} ${result.description}`));
    return terms.some((term) => haystack.has(term));
  });
  if (matching.length === 0) return envelope(res, 422, 'AssertionFailureError', 42206, `No search results available for query ${body.q}`);
  const format = String(request.headers['x-respond-with'] ?? request.headers['x-return-format'] ?? 'content');
  const slice = matching.slice((pageNumber - 1) * num, pageNumber * num);
  const data = slice.map((result) => {
    const base = { title: result.title, url: result.url, description: result.description, ...(result.date ? { date: result.date } : {}) };
    if (format.includes('no-content')) return base;
    const links = request.headers['x-md-link-style'] === 'discarded' ? '' : ' [More](https://example.com/more)';
    return {
      ...base,
      ...(format === 'text' ? { text: result.text } : { content: `${result.content}${links}` }),
      ...(result.publishedTime ? { publishedTime: result.publishedTime } : {}),
      usage: { tokens: 1200 },
    };
  });
  sendJson(res, 200, { code: 200, status: 20000, data, meta: { usage: { tokens: format.includes('no-content') ? 10000 : 1200 * data.length } } });
}

function read(request: RecordedRequest, pages: ReadonlyMap<string, ReaderPage>, res: ServerResponse) {
  const url = (request.body as { url?: unknown } | undefined)?.url;
  if (typeof url !== 'string') return envelope(res, 400, 'ParamValidationError', 40001, 'url: Required but not provided');
  const found = pages.get(url);
  if (!found) return envelope(res, 422, 'AssertionFailureError', 42206, `No content available for URL ${url}`);
  switch (found.kind) {
    case 'unreachable':
      return envelope(res, 422, 'AssertionFailureError', 42206, `Failed to goto ${url}: TimeoutError: Navigation timeout of 30000 ms exceeded`, { cause: { name: 'TimeoutError' } });
    case 'blocked':
      return envelope(res, 451, 'SecurityCompromiseError', 45102, `Domain ${hostOf(url)} blocked until Fri Jan 01 2100 due to previous abuse found on ${url}`);
    case 'target404':
      return sendJson(res, 200, {
        code: 200,
        status: 20000,
        data: { title: 'Page not found', description: '', url, content: '# Page not found', warning: 'Target URL returned error 404: Not Found', usage: { tokens: 12 } },
        meta: { usage: { tokens: 12 } },
      });
  }
  const textFormat = request.headers['x-return-format'] === 'text';
  const discardLinks = request.headers['x-md-link-style'] === 'discarded';
  const content = discardLinks ? found.content.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1') : found.content;
  sendJson(res, 200, {
    code: 200,
    status: 20000,
    data: {
      title: found.title,
      description: '',
      url,
      ...(textFormat ? { text: found.text } : { content }),
      ...(found.publishedTime ? { publishedTime: found.publishedTime } : {}),
      usage: { tokens: 345 },
    },
    meta: { usage: { tokens: 345 } },
  });
}

function rerank(request: RecordedRequest, res: ServerResponse) {
  const body = (request.body ?? {}) as { model?: unknown; query?: unknown; documents?: unknown; top_n?: unknown; return_documents?: unknown };
  if (typeof body.query !== 'string' || !Array.isArray(body.documents) || body.documents.some((document) => typeof document !== 'string')) {
    return sendJson(res, 422, { detail: [{ loc: ['body', 'documents'], msg: 'field required', type: 'value_error.missing' }] });
  }
  const documents = body.documents as string[];
  const results = documents
    .map((text, index) => ({ index, text, relevance_score: jinaScore(body.query as string, text) }))
    .sort((a, b) => b.relevance_score - a.relevance_score)
    .slice(0, typeof body.top_n === 'number' ? body.top_n : documents.length)
    .map(({ index, text, relevance_score }) => ({ index, ...(body.return_documents === false ? {} : { document: { text } }), relevance_score }));
  sendJson(res, 200, { model: body.model ?? 'jina-reranker-v2-base-multilingual', usage: { total_tokens: 40 * documents.length }, results });
}

/** Which of Jina's hosts a request is for: s.jina.ai, r.jina.ai or api.jina.ai; null for none. */
function hostFor(request: RecordedRequest): 's' | 'r' | 'api' | null {
  const path = pathOf(request);
  return path === '/s/' ? 's' : path === '/r/' ? 'r' : path === '/api/v1/rerank' ? 'api' : null;
}

/** A documented failure, in the shape of the host it comes from (`api` speaks {"detail"}). */
const onHost =
  (answers: { api: Fault; other: Fault }): Fault =>
  (request, res, req) =>
    (hostFor(request) === 'api' ? answers.api : answers.other)(request, res, req);

const FAULTS: Record<JinaFault, Fault> = {
  rate_limited: onHost({
    api: (_request, res) => sendJson(res, 429, { detail: 'Rate limit exceeded: 500 requests per minute' }, { 'retry-after': '7' }),
    other: (_request, res) => envelope(res, 429, 'RateLimitTriggeredError', 42903, 'Per UID rate limit exceeded', { retryAfter: 7 }, { 'retry-after': '7' }),
  }),
  quota: onHost({
    api: (_request, res) => sendJson(res, 402, { detail: 'Insufficient balance. Please top up your API key.' }),
    other: (_request, res) => envelope(res, 402, 'InsufficientBalanceError', 40203, 'Account balance not enough to run this query, please recharge.'),
  }),
  quota_in_200: (_request, res) =>
    sendJson(res, 200, { data: null, code: 402, name: 'InsufficientBalanceError', status: 40203, message: 'Account balance not enough to run this query, please recharge.' }),
  server_error: onHost({
    api: (_request, res) => sendJson(res, 500, { detail: 'Internal Server Error' }),
    other: (_request, res) => envelope(res, 500, 'DownstreamServiceFailureError', 50000, 'Search(web) failed'),
  }),
  malformed: rawReply(200, '<html><body>502 Bad Gateway</body></html>', 'text/html'),
  wrong_shape: onHost({
    api: (_request, res) => sendJson(res, 200, { model: 'x', results: [{ index: 99, relevance_score: 0.5 }] }),
    other: (_request, res) => sendJson(res, 200, { code: 200, status: 20000, data: { results: [] } }),
  }),
  stall: stall(),
};

export async function startFakeJina(options: { corpus?: readonly JinaResult[]; pages?: Record<string, ReaderPage> } = {}) {
  const corpus = options.corpus ?? JINA_CORPUS;
  const pages = new Map(Object.entries(options.pages ?? {}));
  const upstream = await startVendorFake<JinaFault>({
    refuse: (request) => {
      const host = hostFor(request);
      if (request.method !== 'POST' || host === null) {
        return (_request, res) => envelope(res, 404, 'ResourceNotFoundError', 40401, `Not found: ${request.method} ${pathOf(request)}`);
      }
      const authorization = request.headers.authorization;
      // The Reader serves anonymous callers; search and rerank need a key.
      if (authorization === undefined && host !== 'r') {
        return (_request, res) =>
          host === 'api'
            ? sendJson(res, 401, { detail: 'Unauthorized: No API key provided' })
            : envelope(res, 401, 'AuthenticationRequiredError', 40103, 'Authentication is required to use this endpoint. Please provide a valid API key via Authorization header.');
      }
      if (authorization !== undefined && authorization !== `Bearer ${JINA_KEY}`) {
        return (_request, res) =>
          host === 'api'
            ? sendJson(res, 401, { detail: 'Unauthorized: Invalid API key' })
            : envelope(res, 401, 'AuthenticationFailedError', 40101, 'Invalid API key, please get a new one from https://jina.ai');
      }
      return undefined;
    },
    failures: FAULTS,
    answer: (request, res) => {
      const host = hostFor(request);
      if (host === 's') return search(request, corpus, res);
      if (host === 'r') return read(request, pages, res);
      rerank(request, res);
    },
  });
  const on = (prefix: string) => upstream.requests.filter((request) => request.url.startsWith(prefix));
  return {
    ...upstream,
    searchBaseUrl: `${upstream.url}/s`,
    readerBaseUrl: `${upstream.url}/r`,
    rerankBaseUrl: `${upstream.url}/api`,
    searches: () => on('/s/'),
    reads: () => on('/r/'),
    reranks: () => on('/api/'),
  };
}
