/**
 * A fake Marginalia Search API (api2.marginalia-search.com), as documented and as implemented:
 * - about.marginalia-search.com/article/api: GET /search?query=… with the key in the API-Key header;
 *   count 1-100, dc, page (1-indexed), nsfw, filter; the shared key "public" "often hits a rate limit".
 * - MarginaliaSearch/MarginaliaSearch code/services-application/api-service/java/nu/marginalia/api/ApiV2.java
 *   search(): no API-Key header → 400 "Missing API-Key header"; unknown key → 401 with an empty body;
 *   no query → 400; per-minute limit → 429 "QPM Limit Exceeded"; daily allowance → 429 "Daily Limit
 *   Exceeded" with API-Event-Type: OverLimitBlock and API-Remaining-Daily-Capacity; a failed query →
 *   500 "Query Execution Failed"; an index timeout → 504; success sets API-Remaining-Daily-Capacity and
 *   API-Event-Type. doSearch() reads count (default 20), dc, timeout, filter, nsfw, page, lang.
 * - model/ApiSearchResults.java and ApiSearchResult.java: {license, query, results: [{url, title,
 *   description, quality, format, resultsFromDomain, details}]}; the `page`/`pages` fields of newer
 *   replies as recorded in a client's fixture of a live reply (metasearchmcp tests/test_marginalia.py).
 * The fake pages its corpus `count` results at a time and honours `site:` and `-site:` terms the way
 * the index's site:<host>/site:<domain> keywords do.
 */
import { sendJson, startUpstream } from '../../helpers/gateway.js';

export interface MarginaliaDoc {
  url: string;
  title: string;
  description: string;
}

export type MarginaliaMode = 'ok' | 'qpm' | 'daily' | 'query-failed' | 'index-timeout' | 'malformed' | 'stall';

const MARGINALIA_LICENSE = 'CC-BY-NC-SA 4.0';

function siteKeywords(url: string): string[] {
  const host = new URL(url).hostname.toLowerCase();
  const domain = host.split('.').slice(-2).join('.');
  return [`site:${host}`, `site:${domain}`];
}

export async function startFakeMarginalia(options: { corpus: MarginaliaDoc[]; keys?: string[]; pageFields?: boolean }) {
  const keys = new Set(options.keys ?? ['public']);
  const state: { mode: MarginaliaMode } = { mode: 'ok' };
  const text = (res: import('node:http').ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(body);
  };
  const upstream = await startUpstream((request, res) => {
    const url = new URL(request.url, 'http://marginalia.invalid');
    if (state.mode === 'stall') return;
    if (url.pathname !== '/search') return text(res, 404, 'Not Found');
    const key = request.headers['api-key'];
    if (typeof key !== 'string') return text(res, 400, 'Missing API-Key header');
    if (!keys.has(key)) return text(res, 401, '');
    const query = url.searchParams.get('query');
    if (query === null) return text(res, 400, '');
    if (state.mode === 'qpm') return text(res, 429, 'QPM Limit Exceeded');
    if (state.mode === 'daily') return text(res, 429, 'Daily Limit Exceeded', { 'API-Remaining-Daily-Capacity': '0', 'API-Event-Type': 'OverLimitBlock' });
    if (state.mode === 'query-failed') return text(res, 500, 'Query Execution Failed');
    if (state.mode === 'index-timeout') return text(res, 504, '');
    if (state.mode === 'malformed') return sendJson(res, 200, { license: MARGINALIA_LICENSE, query, problems: ['unexpected'] });

    const terms = query.split(/\s+/);
    const included = terms.filter((term) => term.startsWith('site:')).at(-1);
    const excluded = terms.filter((term) => term.startsWith('-site:')).map((term) => term.slice(1));
    const matching = options.corpus.filter((doc) => {
      const keywords = siteKeywords(doc.url);
      return (!included || keywords.includes(included)) && !excluded.some((term) => keywords.includes(term));
    });
    const count = Math.min(100, Math.max(1, Number(url.searchParams.get('count') ?? '20')));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? '1'));
    const results = matching.slice((page - 1) * count, page * count).map((doc, i) => ({
      url: doc.url,
      title: doc.title,
      description: doc.description,
      quality: -3.5 + i / 10,
      format: 'html',
      resultsFromDomain: 1,
      details: [[{ keyword: terms[0], count: 2, flagsUnstableAPI: ['Title', 'TfIdfHigh'] }]],
    }));
    const pages = Math.max(1, Math.ceil(matching.length / count));
    sendJson(
      res,
      200,
      {
        license: MARGINALIA_LICENSE,
        ...(options.pageFields === false ? {} : { page, pages }),
        query,
        results,
      },
      { 'API-Remaining-Daily-Capacity': '4999', 'API-Event-Type': 'Success' },
    );
  });
  return { ...upstream, state };
}

export type FakeMarginalia = Awaited<ReturnType<typeof startFakeMarginalia>>;
