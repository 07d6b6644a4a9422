/**
 * A fake SearXNG instance speaking its JSON search API, as documented and as implemented:
 * - docs.searxng.org/dev/search_api.html (searxng/searxng docs/dev/search_api.rst): GET /search with
 *   q, categories, engines, language, pageno (default 1), time_range, format, safesearch; "Requesting
 *   an unset format will return a 403 Forbidden error".
 * - searx/webapp.py search(): `if output_format not in settings['search']['formats']: flask.abort(403)`,
 *   which werkzeug renders as its HTML "403 Forbidden" page; no q → 400 {"error": "No query"}.
 * - searx/webutils.py get_json_response(): {query, number_of_results, results, answers, corrections,
 *   infoboxes, suggestions, unresponsive_engines}; get_translated_errors(): sorted [engine, reason]
 *   pairs, reason "too many requests", "CAPTCHA", "access denied", "timeout"…, "Suspended: "-prefixed
 *   while the engine is suspended. publishedDate is datetime.isoformat() (no zone) or null.
 * - searx/botdetection/_helpers.py too_many_requests(): the limiter's 429 "Too Many Requests".
 * Results are what the result container serializes for a default.html result (url, title, content,
 * engine, parsed_url, template, engines, positions, score, category, publishedDate…). The fake pages
 * its corpus `pageSize` results at a time, as SearXNG's merged engine pages would.
 */
import { sendJson, startUpstream } from '../../helpers/gateway.js';

export interface SearxngDoc {
  url: string;
  title: string;
  content: string;
  publishedDate?: string | null;
  engines?: string[];
}

export type SearxngMode =
  | 'ok'
  | 'json-disabled'
  | 'limiter'
  | 'server-error'
  | 'malformed'
  | 'stall'
  | 'blind-rate-limited'
  | 'blind-timeout'
  | 'empty-healthy';

/** Werkzeug's Forbidden page, as flask.abort(403) sends it. */
const FORBIDDEN_HTML =
  '<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n<p>You don&#39;t have the permission to access the requested resource. It is either read-protected or not readable by the server.</p>\n';

export async function startFakeSearxng(options: { corpus: SearxngDoc[]; pageSize?: number; requiredAuthorization?: string }) {
  const pageSize = options.pageSize ?? 10;
  const state: { mode: SearxngMode } = { mode: 'ok' };
  const upstream = await startUpstream((request, res) => {
    const url = new URL(request.url, 'http://searxng.invalid');
    if (state.mode === 'stall') return;
    if (options.requiredAuthorization && request.headers.authorization !== options.requiredAuthorization) {
      // What an authenticating reverse proxy in front of the instance answers.
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' });
      res.end('401 Unauthorized');
      return;
    }
    if (url.pathname !== '/search' && url.pathname !== '/') return sendJson(res, 404, { error: 'not found' });
    if (url.searchParams.get('format') !== 'json') {
      // html, the default format, is always enabled.
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!DOCTYPE html><html><body><div id="results"></div></body></html>');
      return;
    }
    if (state.mode === 'json-disabled') {
      res.writeHead(403, { 'content-type': 'text/html; charset=utf-8' });
      res.end(FORBIDDEN_HTML);
      return;
    }
    if (state.mode === 'limiter') {
      res.writeHead(429, { 'content-type': 'text/plain' });
      res.end('Too Many Requests');
      return;
    }
    if (state.mode === 'server-error') return sendJson(res, 500, { error: 'search error' });
    if (state.mode === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"query": "x", "results": [{"url": ');
      return;
    }
    const q = url.searchParams.get('q');
    if (!q) return sendJson(res, 400, { error: 'No query' });
    const pageno = Number(url.searchParams.get('pageno') ?? '1');
    if (!Number.isInteger(pageno) || pageno < 1) return sendJson(res, 400, { error: 'Invalid value "pageno"' });

    let unresponsive: Array<[string, string]> = [];
    let docs = options.corpus.slice((pageno - 1) * pageSize, pageno * pageSize);
    if (state.mode === 'blind-rate-limited') {
      docs = [];
      unresponsive = [
        ['brave', 'Suspended: too many requests'],
        ['duckduckgo', 'CAPTCHA'],
        ['google', 'Suspended: access denied'],
      ];
    } else if (state.mode === 'blind-timeout') {
      docs = [];
      unresponsive = [
        ['bing', 'timeout'],
        ['duckduckgo', 'timeout'],
      ];
    } else if (state.mode === 'empty-healthy') {
      docs = [];
    }
    sendJson(res, 200, {
      query: q,
      number_of_results: 0,
      results: docs.map((doc, i) => {
        const engines = doc.engines ?? ['duckduckgo', 'brave'];
        const parsed = new URL(doc.url);
        return {
          url: doc.url,
          title: doc.title,
          content: doc.content,
          publishedDate: doc.publishedDate ?? null,
          thumbnail: '',
          engine: engines[0],
          template: 'default.html',
          parsed_url: [parsed.protocol.replace(':', ''), parsed.host, parsed.pathname, '', parsed.search.slice(1), ''],
          img_src: '',
          priority: '',
          engines,
          positions: engines.map(() => (pageno - 1) * pageSize + i + 1),
          score: 2 / ((pageno - 1) * pageSize + i + 1),
          category: 'general',
        };
      }),
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: [],
      unresponsive_engines: unresponsive,
    });
  });
  return { ...upstream, state };
}

export type FakeSearxng = Awaited<ReturnType<typeof startFakeSearxng>>;
