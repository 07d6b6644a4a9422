/**
 * A fake Wikipedia (MediaWiki Action API) per language, at {url}/{language}/w/api.php, as documented:
 * - mediawiki.org/wiki/API:Search: list=search with srsearch (required), srlimit (1-500, default 10),
 *   sroffset, srprop (default size|wordcount|timestamp|snippet), srinfo; the reply's
 *   query.searchinfo.totalhits, query.search[{ns, title, pageid, size, wordcount, snippet, timestamp}]
 *   and continue.sroffset while more exist. The fixtures are the page's "Nelson Mandela" example.
 * - mediawiki.org/wiki/API:JSON_version_2: formatversion=2 (booleans as true, lists as arrays).
 * - mediawiki.org/wiki/Extension:TextExtracts#API with ApiQueryExtracts.php: prop=extracts, explaintext,
 *   exsectionformat; a whole-article request for several pages is lowered to one extract with the
 *   warning '"exlimit" was too large for a whole article extracts request, lowered to 1.'
 * - mediawiki.org/wiki/API:Errors_and_warnings: errors as HTTP 200 {"error": {"code", "info",
 *   "docref"}, "servedby"}, e.g. ratelimited, internal_api_error_DBQueryError, missingparam;
 *   Manual:Maxlag_parameter: {"error": {"code": "maxlag", "info": "Waiting for $host: $lag seconds
 *   lagged", "host", "lag"}} with Retry-After and X-Database-Lag.
 * - Wikimedia's User-Agent policy (meta.wikimedia.org/wiki/User-Agent_policy): a missing or generic
 *   User-Agent gets HTTP 403 "Please set a user-agent and respect our robot policy https://w.wiki/4wJS";
 *   its edge answers floods with 429 and Retry-After.
 */
import { sendJson, startUpstream } from '../../helpers/gateway.js';

export interface WikiPage {
  pageid: number;
  title: string;
  /** HTML, with <span class="searchmatch"> around the matches. */
  snippet: string;
  timestamp: string;
  wordcount: number;
  size: number;
  extract: string;
}

export type WikipediaMode = 'ok' | 'ratelimited' | 'maxlag' | 'internal-error' | 'edge-429' | 'http-503' | 'malformed' | 'stall' | 'extracts-failing';

const DOCREF = 'See https://en.wikipedia.org/w/api.php for API usage. Subscribe to the mediawiki-api-announce mailing list at &lt;https://lists.wikimedia.org/postorius/lists/mediawiki-api-announce.lists.wikimedia.org/&gt; for notice of API deprecations and breaking changes.';
const SERVEDBY = 'mw-api-ext.eqiad.main-6c9d8b7f4-x2k8q';
const GENERIC_AGENT = /^(python-requests|curl|wget|node|undici|go-http-client|java)\b/i;

/** The API:Search page's example (srsearch=Nelson Mandela), plus titles that need escaping. */
export const MANDELA_PAGES: WikiPage[] = [
  {
    pageid: 21492751,
    title: 'Nelson Mandela',
    snippet: '<span class="searchmatch">Nelson</span> Rolihlahla <span class="searchmatch">Mandela</span> (/mænˈdɛlə/; Xhosa: [xolíɬaɬa mandɛ̂ːla]; 18 July 1918 – 5 December 2013) was a South African anti-apartheid revolutionary,',
    timestamp: '2018-07-23T07:59:43Z',
    wordcount: 23664,
    size: 196026,
    extract: 'Nelson Rolihlahla Mandela was a South African anti-apartheid activist, politician, and statesman who served as the first president of South Africa from 1994 to 1999.\n\nEarly life\nMandela was born on 18 July 1918 in the village of Mvezo.',
  },
  {
    pageid: 41284488,
    title: 'Death of Nelson Mandela',
    snippet: 'On December 5, 2013, <span class="searchmatch">Nelson</span> <span class="searchmatch">Mandela</span>, the first President of South Africa to be elected in a fully represented democratic election, as well as the country&#039;s &quot;father&quot;',
    timestamp: '2018-07-19T17:25:31Z',
    wordcount: 9495,
    size: 112925,
    extract: 'On 5 December 2013, Nelson Mandela, the first president of South Africa to be elected in a fully representative democratic election, died at the age of 95.',
  },
  {
    pageid: 4466,
    title: "Côte d'Ivoire",
    snippet: 'visited by <span class="searchmatch">Mandela</span> &amp; others',
    timestamp: '2024-02-01T10:00:00Z',
    wordcount: 12000,
    size: 90000,
    extract: "Ivory Coast, officially the Republic of Côte d'Ivoire, is a country on the southern coast of West Africa.",
  },
  {
    pageid: 1011,
    title: 'AC/DC',
    snippet: '',
    timestamp: '2024-02-02T10:00:00Z',
    wordcount: 8000,
    size: 60000,
    extract: 'AC/DC are an Australian rock band formed in Sydney in 1973.',
  },
];

export async function startFakeWikipedia(options: { corpora: Record<string, WikiPage[]> }) {
  const state: { mode: WikipediaMode } = { mode: 'ok' };
  const error = (code: string, info: string, extra: Record<string, unknown> = {}) => ({ error: { code, info, ...extra, docref: DOCREF }, servedby: SERVEDBY });
  const upstream = await startUpstream((request, res) => {
    const url = new URL(request.url, 'http://wikipedia.invalid');
    const match = /^(?:\/([a-z-]+))?\/w\/api\.php$/.exec(url.pathname);
    if (state.mode === 'stall') return;
    if (!match) return sendJson(res, 404, { error: 'not found' });
    const agent = request.headers['user-agent'];
    if (!agent || GENERIC_AGENT.test(agent)) {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('Please set a user-agent and respect our robot policy https://w.wiki/4wJS. See also https://phabricator.wikimedia.org/T400119.');
      return;
    }
    if (state.mode === 'edge-429') {
      res.writeHead(429, { 'content-type': 'text/html', 'retry-after': '2' });
      res.end('<!DOCTYPE html><html><head><title>Wikimedia Error</title></head><body><p>Too many requests</p></body></html>');
      return;
    }
    if (state.mode === 'http-503') {
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end('<!DOCTYPE html><html><head><title>Wikimedia Error</title></head><body><p>Our servers are currently under maintenance or experiencing a technical issue.</p></body></html>');
      return;
    }
    if (state.mode === 'malformed') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end('<br />\n<b>Fatal error</b>: Allowed memory size exhausted');
      return;
    }
    if (state.mode === 'ratelimited') return sendJson(res, 200, error('ratelimited', "You've exceeded your rate limit. Please wait some time and try again."));
    if (state.mode === 'maxlag') {
      return sendJson(res, 200, error('maxlag', 'Waiting for 10.64.48.35: 7 seconds lagged.', { host: '10.64.48.35', lag: 7, type: 'db' }), { 'retry-after': '5', 'x-database-lag': '7' });
    }
    const p = url.searchParams;
    if (p.get('action') !== 'query' || p.get('format') !== 'json' || p.get('formatversion') !== '2') {
      return sendJson(res, 200, error('badvalue', 'This fake speaks action=query&format=json&formatversion=2 only.'));
    }
    const corpus = options.corpora[match[1] ?? ''] ?? [];

    if (p.get('list') === 'search') {
      if (state.mode === 'internal-error') {
        return sendJson(res, 200, error('internal_api_error_DBQueryError', '[d3b5e1a2] Exception caught: A database query error has occurred.', { errorclass: 'Wikimedia\\Rdbms\\DBQueryError' }));
      }
      if (!p.get('srsearch')) return sendJson(res, 200, error('missingparam', 'The "srsearch" parameter must be set.'));
      const limit = Math.min(500, Number(p.get('srlimit') ?? '10'));
      const offset = Number(p.get('sroffset') ?? '0');
      const props = new Set((p.get('srprop') ?? 'size|wordcount|timestamp|snippet').split('|'));
      const hits = corpus.slice(offset, offset + limit).map((page) => ({
        ns: 0,
        title: page.title,
        pageid: page.pageid,
        ...(props.has('size') ? { size: page.size } : {}),
        ...(props.has('wordcount') ? { wordcount: page.wordcount } : {}),
        ...(props.has('snippet') ? { snippet: page.snippet } : {}),
        ...(props.has('timestamp') ? { timestamp: page.timestamp } : {}),
      }));
      return sendJson(res, 200, {
        batchcomplete: true,
        ...(offset + limit < corpus.length ? { continue: { sroffset: offset + limit, continue: '-||' } } : {}),
        query: { ...(p.get('srinfo') !== '' ? { searchinfo: { totalhits: corpus.length } } : {}), search: hits },
      });
    }

    if (p.get('prop') === 'extracts') {
      if (state.mode === 'extracts-failing') {
        return sendJson(res, 200, error('internal_api_error_DBQueryError', '[77aa01] Exception caught: A database query error has occurred.'));
      }
      const ids = (p.get('pageids') ?? '').split('|').filter(Boolean).map(Number);
      const wholeArticles = p.get('exintro') === null;
      const lowered = wholeArticles && ids.length > 1;
      const pages = ids.map((id, i) => {
        const page = corpus.find((candidate) => candidate.pageid === id);
        if (!page) return { pageid: id, missing: true };
        const extract = p.get('explaintext') !== null ? page.extract : `<p>${page.extract}</p>`;
        return { pageid: id, ns: 0, title: page.title, ...(lowered && i > 0 ? {} : { extract }) };
      });
      return sendJson(res, 200, {
        ...(lowered ? { continue: { excontinue: 1, continue: '||' }, warnings: { extracts: { warnings: '"exlimit" was too large for a whole article extracts request, lowered to 1.' } } } : { batchcomplete: true }),
        query: { pages },
      });
    }
    return sendJson(res, 200, { batchcomplete: true });
  });
  return { ...upstream, state };
}

export type FakeWikipedia = Awaited<ReturnType<typeof startFakeWikipedia>>;
