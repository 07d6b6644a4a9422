/**
 * The vendors' official JS SDKs against real searchgate gateways over HTTP, changed in nothing but
 * their base URL and key (issue 16; ../shared/spec/dialects.md §6.2, §6.6, §6.11 and §7): cohere-ai
 * (`CohereClient`, `CohereClientV2`), @tavily/core and exa-js.
 *
 * Two gateways, each started once: the embedded default (the local index, the real embedded
 * reranker, page text fetched by the local content provider from a loopback site) and a configured
 * upstream chain (a loopback searchgate-compatible upstream for search and rerank; page text from
 * the same loopback site). Every key is a real account key; one is deleted, one belongs to an
 * account whose daily allowance is spent.
 *
 * For each SDK: (a) a search or rerank call returns results; (b) extract / contents returns page
 * text; (c) a deleted key raises the SDK's own error with a readable message; and bad input comes
 * back as the vendor's 4xx error class. The tests are serial so that the last one can check that
 * nothing crashed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { Cohere, CohereClient, CohereClientV2, CohereError } from 'cohere-ai';
import { Exa, ExaError } from 'exa-js';
import { tavily, TavilyKeylessLimitError } from '@tavily/core';
import { indexedPage, writeLocalIndex } from '../helpers/dialect-bench.js';
import { REAL_LOCAL_RERANKER, searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig, type RunningGateway } from '../helpers/gateway.js';

// ---------------------------------------------------------------------------------------------
// Fixtures: a loopback site with pages to extract, a local index, a searchgate-compatible upstream.

const ARTICLE = (title: string, paragraphs: string[]) => `<!doctype html><html lang="en"><head><title>${title}</title>
<meta property="article:published_time" content="2024-02-03T04:05:06Z"></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/contact">Contact</a></nav>
<article><h1>${title}</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('')}</article>
<footer>Copyright 2024 Example Corp. All rights reserved. <a href="/privacy">Privacy</a></footer></body></html>`;

const SITE_PAGES: Record<string, { title: string; paragraphs: string[] }> = {
  '/article': {
    title: 'How page text is filled',
    paragraphs: [
      'The gateway fetches pages for results that came without text, within a time budget per request.',
      'It extracts the main text with boilerplate such as navigation and footers removed, off the event loop.',
      'A page that cannot be fetched in time keeps its result, without text, and never fails the request.',
    ],
  },
  '/second': {
    title: 'Paris, capital of France',
    paragraphs: ['Paris is the capital and largest city of France, on the river Seine.', 'It has been the capital for most of the last thousand years.'],
  },
  '/third': {
    title: 'Lyon and its cuisine',
    paragraphs: ['Lyon is a city in France known for its cuisine.', 'Many call it the capital of gastronomy, with its bouchons and markets.'],
  },
};
const ARTICLE_SENTENCE = 'The gateway fetches pages for results that came without text';

const INDEX_PAGES = [
  { url: 'https://paris.example/', title: 'Paris', text: 'Paris is the capital and largest city of France, on the Seine. Paris hosts the Louvre.', datePublished: '2026-05-01T00:00:00.000Z' },
  { url: 'https://lyon.example/', title: 'Lyon', text: 'Lyon is a city in France known for its cuisine and the capital of gastronomy.' },
  { url: 'https://bananas.example/', title: 'Bananas', text: 'Bananas are rich in potassium, and France imports many from overseas.' },
  { url: 'https://marseille.example/', title: 'Marseille', text: 'Marseille is a port city of France on the Mediterranean, the oldest city of France.' },
  { url: 'https://bordeaux.example/', title: 'Bordeaux', text: 'Bordeaux is a city in France famous for wine, not the capital of France.' },
].map(indexedPage);

const QUERY = 'capital of France';
const RERANK_QUERY = 'what is the capital of france';
const RERANK_DOCUMENTS = ['Bananas are rich in potassium.', 'Berlin is the capital of Germany.', 'Paris is the capital and largest city of France.'];

const words = (text: string) => new Set(text.toLowerCase().match(/[a-z]+/g) ?? []);
/** The fake upstream's reranker: the share of the query's words a document has, in [0, 1]. */
function overlapScore(query: string, document: string): number {
  const q = words(query);
  const d = words(document);
  return [...q].filter((word) => d.has(word)).length / Math.max(1, q.size);
}

interface Gateways {
  site: Awaited<ReturnType<typeof startUpstream>>;
  upstream: Awaited<ReturnType<typeof startUpstream>>;
  embedded: Setup;
  upstreamChain: Setup;
}

interface Setup {
  name: 'embedded' | 'upstream';
  gateway: RunningGateway;
  base: string;
  /** A live account key. */
  key: string;
  /** A deleted key of the same account. */
  deleted: string;
  /** A key of an account whose daily allowance is 0. */
  spent: string;
}

const ACCOUNT_DEFAULTS = { defaults: { dailyAllowance: 100_000, ratePerSecond: 0, ratePerMinute: 0 } };

async function keysFor(gateway: RunningGateway) {
  const accounts = gateway.gateway.services.accounts;
  const account = await accounts.store.createAccount({ name: 'sdk-clients' }, Date.now());
  const { key } = await accounts.createKey(account.id, 'live');
  const gone = await accounts.createKey(account.id, 'gone');
  await accounts.store.deleteKey(gone.record.id, Date.now());
  const spentAccount = await accounts.store.createAccount({ name: 'spent', dailyAllowance: 0 }, Date.now());
  const { key: spent } = await accounts.createKey(spentAccount.id, 'spent');
  return { key, deleted: gone.key, spent };
}

let fixtures: Gateways;

test.before(async () => {
  const site = await startUpstream((request, res) => {
    const path = request.url.split('?')[0]!;
    const page = SITE_PAGES[path];
    if (page) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(ARTICLE(page.title, page.paragraphs));
    } else {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not found</body></html>');
    }
  });

  // The upstream answers as many results as asked (the first three on the loopback site), and
  // reranks by word overlap.
  const upstream = await startUpstream((request, res) => {
    if (request.url === '/v1/web-search') {
      const count = Math.min(Number(request.body?.count ?? 10), 60);
      const value = Array.from({ length: count }, (_, i) => {
        const path = Object.keys(SITE_PAGES)[i];
        return path
          ? { url: `${site.url}${path}`, name: SITE_PAGES[path]!.title, snippet: SITE_PAGES[path]!.paragraphs[0] }
          : { url: `https://filler.example/${i}`, name: `Filler ${i}`, snippet: `Filler result number ${i} about the capital of France.` };
      });
      sendJson(res, 200, searchEnvelope(value, { totalEstimatedMatches: 1000 }));
    } else if (request.url === '/v1/rerank') {
      const documents = (request.body?.documents ?? []) as Array<string | { text: string }>;
      const results = documents
        .map((document, index) => ({ index, relevance_score: overlapScore(String(request.body?.query ?? ''), typeof document === 'string' ? document : document.text) }))
        .sort((a, b) => b.relevance_score - a.relevance_score);
      sendJson(res, 200, { code: 200, log_id: 'upstream-rerank', msg: null, model: 'upstream-reranker', results });
    } else {
      sendJson(res, 404, { code: 404, log_id: 'upstream', msg: 'no such route' });
    }
  });

  const indexDirectory = await writeLocalIndex(mkdtempSync(join(tmpdir(), 'searchgate-js-sdks-index-')), INDEX_PAGES);

  const embeddedGateway = await startGateway({
    providers: { local: { type: 'local', directory: indexDirectory, allowPrivateNetworks: true }, 'local-reranker': REAL_LOCAL_RERANKER },
    search: { chain: ['local'], rerank: { model: null } },
    content: { chain: ['local'], timeBudgetMs: 5000 },
    cache: { enabled: false },
    accounts: ACCOUNT_DEFAULTS,
  });

  const contentDirectory = mkdtempSync(join(tmpdir(), 'searchgate-js-sdks-content-'));
  const base = upstreamConfig(upstream.url);
  const upstreamGateway = await startGateway({
    ...base,
    providers: { ...base.providers, local: { type: 'local', directory: contentDirectory, allowPrivateNetworks: true } },
    search: { chain: ['up'], rerank: { model: null } },
    content: { chain: ['local'], timeBudgetMs: 5000 },
    cache: { enabled: false },
    accounts: ACCOUNT_DEFAULTS,
  });

  fixtures = {
    site,
    upstream,
    embedded: { name: 'embedded', gateway: embeddedGateway, base: embeddedGateway.url, ...(await keysFor(embeddedGateway)) },
    upstreamChain: { name: 'upstream', gateway: upstreamGateway, base: upstreamGateway.url, ...(await keysFor(upstreamGateway)) },
  };
});

test.after.always(async () => {
  if (!fixtures) return;
  await fixtures.embedded.gateway.close();
  await fixtures.upstreamChain.gateway.close();
  await fixtures.upstream.close();
  await fixtures.site.close();
});

// ---------------------------------------------------------------------------------------------
// Helpers

/** The rejection of a call that must fail; a resolved call fails the test with what it returned. */
async function rejection(t: ExecutionContext, call: Promise<unknown>, what: string, evidence?: () => string): Promise<any> {
  let value: unknown;
  try {
    value = await call;
  } catch (error) {
    return error;
  }
  // Outside the try: ava's t.fail throws, and that must end the test, not pass for the SDK's error.
  t.fail(`${what}: expected a rejection, got ${JSON.stringify(value)?.slice(0, 300)}${evidence ? `; ${evidence()}` : ''}`);
  return undefined;
}

const describe = (error: any) =>
  `${error?.constructor?.name ?? typeof error}: status ${error?.statusCode ?? '-'}: ${String(error?.message ?? error).slice(0, 600)}`;

/** A raw request, for the status line and body the SDK does not expose (evidence only). */
async function raw(base: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  let json: any = text;
  try {
    json = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, statusText: response.statusText, headers: response.headers, body: json };
}

/** /v1's message for a deleted key: the dialects' `<reason>` (R11). */
async function v1Reason(setup: Setup, key: string | null): Promise<string> {
  const reply = await raw(setup.base, '/v1/rerank', { query: 'q', documents: ['d'] }, key === null ? {} : { authorization: `Bearer ${key}` });
  return String(reply.body?.message);
}

const SETUPS = ['embedded', 'upstream'] as const;
const setupOf = (name: (typeof SETUPS)[number]): Setup => (name === 'embedded' ? fixtures.embedded : fixtures.upstreamChain);
const siteUrl = (path: string) => `${fixtures.site.url}${path}`;
/** /v1/web-search's answer to a freshness value, for comparison (evidence). */
async function v1Freshness(setup: Setup, freshness: string): Promise<string> {
  const reply = await raw(setup.base, '/v1/web-search', { query: QUERY, count: 1, freshness }, { authorization: `Bearer ${setup.key}` });
  return `/v1/web-search with freshness ${freshness} answers ${reply.status} ${JSON.stringify(reply.body?.message ?? '(results)')}`;
}

/** The body of the last search the upstream gateway sent its upstream (evidence). */
const lastUpstreamSearch = () => fixtures.upstream.requests.filter((r) => r.url === '/v1/web-search').at(-1)?.body;

// ---------------------------------------------------------------------------------------------
// cohere-ai 8.1.0 (§6.2, §7.1, §7.2)

for (const name of SETUPS) {
  const cohere = (token: string, root = false) => new CohereClient({ token, environment: setupOf(name).base + (root ? '' : '/cohere'), maxRetries: 0 });
  const cohereV2 = (token: string, root = false) => new CohereClientV2({ token, environment: setupOf(name).base + (root ? '' : '/cohere'), maxRetries: 0 });

  const checkRanked = (t: ExecutionContext, results: Array<{ index: number; relevanceScore: number }>) => {
    t.is(results.length, 2, JSON.stringify(results));
    t.is(results[0]!.index, 2, 'the Paris document ranks first');
    for (const result of results) {
      t.is(typeof result.relevanceScore, 'number', JSON.stringify(result));
      t.true(result.relevanceScore >= 0 && result.relevanceScore <= 1, `score in [0,1]: ${result.relevanceScore}`);
    }
    t.true(results[0]!.relevanceScore >= results[1]!.relevanceScore, 'best first');
  };

  test.serial(`[${name}] cohere-ai CohereClient (v1): rerank-english-v3.0, topN 2, best first, scores in [0,1]`, async (t) => {
    const { key } = setupOf(name);
    const response = await cohere(key).rerank({ model: 'rerank-english-v3.0', query: RERANK_QUERY, documents: RERANK_DOCUMENTS, topN: 2, returnDocuments: true });
    checkRanked(t, response.results);
    t.is(response.results[0]!.document?.text, RERANK_DOCUMENTS[2]);
    t.is(response.meta?.apiVersion?.version, '1', JSON.stringify(response.meta));
    t.is(response.meta?.billedUnits?.searchUnits, 1, 'billed units = allowance units charged');
  });

  test.serial(`[${name}] cohere-ai CohereClientV2: rerank-v3.5, topN 2, best first, scores in [0,1]`, async (t) => {
    const { key } = setupOf(name);
    const response = await cohereV2(key).rerank({ model: 'rerank-v3.5', query: RERANK_QUERY, documents: RERANK_DOCUMENTS, topN: 2 });
    checkRanked(t, response.results);
    t.is(response.meta?.apiVersion?.version, '2', JSON.stringify(response.meta));
  });

  test.serial(`[${name}] cohere-ai with the bare base URL reaches root /v1/rerank and /v2/rerank`, async (t) => {
    const { key } = setupOf(name);
    checkRanked(t, (await cohere(key, true).rerank({ model: 'rerank-english-v3.0', query: RERANK_QUERY, documents: RERANK_DOCUMENTS, topN: 2 })).results);
    checkRanked(t, (await cohereV2(key, true).rerank({ model: 'rerank-v3.5', query: RERANK_QUERY, documents: RERANK_DOCUMENTS, topN: 2 })).results);
  });

  test.serial(`[${name}] cohere-ai: a deleted key raises UnauthorizedError 401 with /v1's message in body.message (v1 and v2)`, async (t) => {
    const setup = setupOf(name);
    const reason = await v1Reason(setup, setup.deleted);
    t.regex(reason, /has been deleted/);
    for (const [label, call] of [
      ['v1', () => cohere(setup.deleted).rerank({ model: 'rerank-english-v3.0', query: RERANK_QUERY, documents: RERANK_DOCUMENTS, topN: 2 })],
      ['v2', () => cohereV2(setup.deleted).rerank({ model: 'rerank-v3.5', query: RERANK_QUERY, documents: RERANK_DOCUMENTS, topN: 2 })],
    ] as const) {
      const error = await rejection(t, call(), label);
      t.true(error instanceof CohereError, `${label}: ${describe(error)}`);
      t.true(error instanceof Cohere.UnauthorizedError, `${label}: ${describe(error)}`);
      t.is(error?.statusCode, 401, label);
      t.is(error?.body?.message, reason, `${label}: body.message is readable: ${JSON.stringify(error?.body)}`);
      t.is(typeof error?.body?.log_id, 'string', `${label}: log_id in the body`);
    }
  });

  test.serial(`[${name}] cohere-ai: an exhausted allowance raises TooManyRequestsError 429 at once (maxRetries 0)`, async (t) => {
    const setup = setupOf(name);
    for (const [label, client] of [
      ['v1', cohere(setup.spent)],
      ['v2', cohereV2(setup.spent)],
    ] as const) {
      const started = Date.now();
      const error = await rejection(t, client.rerank({ model: label === 'v1' ? 'rerank-english-v3.0' : 'rerank-v3.5', query: RERANK_QUERY, documents: RERANK_DOCUMENTS }), label);
      t.true(error instanceof Cohere.TooManyRequestsError, `${label}: ${describe(error)}`);
      t.is(error?.statusCode, 429, label);
      t.regex(String(error?.body?.message), /^daily allowance exhausted: /, `${label}: ${JSON.stringify(error?.body)}`);
      t.true(Date.now() - started < 5000, `${label}: no retry: ${Date.now() - started} ms`);
    }
  });

  test.serial(`[${name}] cohere-ai: no key (token "") raises UnauthorizedError 401`, async (t) => {
    const setup = setupOf(name);
    const reason = await v1Reason(setup, null);
    for (const [label, call] of [
      ['v1', () => cohere('').rerank({ model: 'rerank-english-v3.0', query: RERANK_QUERY, documents: RERANK_DOCUMENTS })],
      ['v2', () => cohereV2('').rerank({ model: 'rerank-v3.5', query: RERANK_QUERY, documents: RERANK_DOCUMENTS })],
    ] as const) {
      const error = await rejection(t, call(), label);
      t.true(error instanceof Cohere.UnauthorizedError, `${label}: ${describe(error)}`);
      t.is(error?.statusCode, 401, label);
      t.is(error?.body?.message, reason, `${label}: ${JSON.stringify(error?.body)}`);
    }
  });

  test.serial(`[${name}] cohere-ai: no documents is BadRequestError 400`, async (t) => {
    const empty = await rejection(t, cohere(setupOf(name).key).rerank({ model: 'rerank-english-v3.0', query: RERANK_QUERY, documents: [] }), 'no documents');
    t.true(empty instanceof Cohere.BadRequestError, describe(empty));
    t.is(empty?.statusCode, 400);
    t.is(typeof empty?.body?.message, 'string', JSON.stringify(empty?.body));
    t.log(`no documents: ${JSON.stringify(empty?.body?.message)}`);
  });

  test.serial(`[${name}] cohere-ai: an unknown model is BadRequestError 400 naming the accepted models (§4.4)`, async (t) => {
    const unknown = await rejection(t, cohereV2(setupOf(name).key).rerank({ model: 'no-such-reranker', query: RERANK_QUERY, documents: RERANK_DOCUMENTS }), 'unknown model');
    t.true(unknown instanceof Cohere.BadRequestError, describe(unknown));
    t.is(unknown?.statusCode, 400);
    // §4.4: a 400 "listing accepted names": the configured model ids (the vendor aliases are named by vendor).
    t.regex(String(unknown?.body?.message), /service-reranker-v1/, `the 400 lists accepted names: ${JSON.stringify(unknown?.body)}`);
    t.log(`unknown model: ${JSON.stringify(unknown?.body?.message)}`);
  });

  test.serial(`[${name}] cohere-ai: CohereClientV2.rerank without model fails in the SDK; the route answers 400 "model is required" (§7.2)`, async (t) => {
    const setup = setupOf(name);
    // cohere-ai serializes V2RerankRequest with jsonOrThrow, where `model` is a required string:
    // the SDK throws before sending anything.
    const noModel = await rejection(t, cohereV2(setup.key).rerank({ query: RERANK_QUERY, documents: RERANK_DOCUMENTS } as any), 'v2 without model');
    t.false(noModel instanceof CohereError, describe(noModel));
    t.regex(String(noModel?.message), /Missing required key "model"/, describe(noModel));
    // What the route answers a client that does send it (§7.2: 400 "invalid request: model is required").
    const direct = await raw(setup.base, '/cohere/v2/rerank', { query: RERANK_QUERY, documents: RERANK_DOCUMENTS }, { authorization: `Bearer ${setup.key}` });
    t.is(direct.status, 400, JSON.stringify(direct.body));
    t.log(`POST /cohere/v2/rerank without model: ${direct.status} ${JSON.stringify(direct.body?.message)}`);
  });

  test.serial(`[${name}] cohere-ai: /cohere/v2/rerank without model words it as §7.2 does ("invalid request: model is required")`, async (t) => {
    const setup = setupOf(name);
    const direct = await raw(setup.base, '/cohere/v2/rerank', { query: RERANK_QUERY, documents: RERANK_DOCUMENTS }, { authorization: `Bearer ${setup.key}` });
    t.is(direct.body?.message, 'invalid request: model is required', `§7.2 wording: ${direct.status} ${JSON.stringify(direct.body)}`);
  });
}

// ---------------------------------------------------------------------------------------------
// @tavily/core 0.7.13 (§5.1, §6.6, §7.4)

const TAVILY_UNAUTHORIZED = 'Unauthorized: missing or invalid API key. (searchgate: ';
const TAVILY_PLAN_LIMIT = "This request exceeds your plan's set usage limit. (searchgate: daily allowance exhausted: ";

/** @tavily/core's handleRequestError: `Error(detail.error)`, or `Error("<status> Error: <body>")` when the body has no detail.error. */
function checkTavilyError(t: ExecutionContext, error: any, label: string) {
  t.true(error instanceof Error, `${label}: ${describe(error)}`);
  t.false(error instanceof TavilyKeylessLimitError, `${label}: not a keyless-limit envelope: ${describe(error)}`);
  t.notRegex(String(error?.message), /^\d{3} Error: /, `${label}: the body has detail.error: ${describe(error)}`);
  t.notRegex(String(error?.message), /^An unexpected error occurred/, `${label}: an HTTP error reply: ${describe(error)}`);
}

for (const name of SETUPS) {
  const client = (apiKey: string) => tavily({ apiKey, apiBaseURL: setupOf(name).base + '/tavily' });

  test.serial(`[${name}] @tavily/core: search with maxResults 3 returns ranked results, images [] and the documented defaults`, async (t) => {
    const response = await client(setupOf(name).key).search(QUERY, { maxResults: 3 });
    t.true(response.results.length > 0 && response.results.length <= 3, JSON.stringify(response.results));
    t.deepEqual(response.images, []);
    t.is(response.answer, null as any, 'answer: null (R6)');
    t.is(typeof response.requestId, 'string');
    t.is(typeof response.responseTime, 'number');
    const n = response.results.length;
    response.results.forEach((result, i) => {
      t.is(typeof result.title, 'string', JSON.stringify(result));
      t.regex(result.url, /^https?:\/\//);
      t.is(typeof result.content, 'string');
      t.true(result.content.length > 0, 'content: the snippet');
      t.is(result.score, (n - i) / n, `rank-derived score (R6) of result ${i}: ${result.score}`);
      t.is(result.rawContent, null as any, 'raw_content null when not asked');
    });
    if (name === 'embedded') {
      const paris = response.results.find((r) => r.url === 'https://paris.example/');
      t.truthy(paris, JSON.stringify(response.results.map((r) => r.url)));
      t.is(paris?.publishedDate, '2026-05-01T00:00:00.000Z', 'published_date when known');
      for (const r of response.results) if (r.url !== 'https://paris.example/') t.false('publishedDate' in r && r.publishedDate !== undefined, `no date invented for ${r.url}`);
    }
    else t.deepEqual(response.results.map((r) => r.url), ['/article', '/second', '/third'].map(siteUrl));
  });

  test.serial(`[${name}] @tavily/core: extract([url, badUrl]) returns the page text and lists the bad URL in failedResults`, async (t) => {
    const good = siteUrl('/article');
    const bad = siteUrl('/missing');
    const response = await client(setupOf(name).key).extract([good, bad]);
    t.is(response.results.length, 1, JSON.stringify(response));
    const [page] = response.results;
    t.is(page!.url, good);
    t.true(page!.rawContent.includes(ARTICLE_SENTENCE), page!.rawContent);
    t.true(page!.rawContent.includes('never fails the request'));
    t.false(/Copyright|Privacy/.test(page!.rawContent), 'boilerplate removed');
    t.deepEqual(page!.images, [], 'images: [] (§5.1)');
    t.is(response.failedResults.length, 1, JSON.stringify(response.failedResults));
    t.is(response.failedResults[0]!.url, bad);
    t.is(typeof response.failedResults[0]!.error, 'string');
    t.true(response.failedResults[0]!.error.length > 0, 'the failure reason in words');
    t.is(typeof response.requestId, 'string');
  });

  test.serial(`[${name}] @tavily/core: a deleted key rejects with Error(detail.error) of the 401, not a TavilyKeylessLimitError`, async (t) => {
    const setup = setupOf(name);
    const reason = await v1Reason(setup, setup.deleted);
    const search = await rejection(t, client(setup.deleted).search(QUERY, { maxResults: 3 }), 'search');
    checkTavilyError(t, search, 'search');
    t.is(search?.message, `${TAVILY_UNAUTHORIZED}${reason})`);
    const extract = await rejection(t, client(setup.deleted).extract([siteUrl('/article')]), 'extract');
    checkTavilyError(t, extract, 'extract');
    t.is(extract?.message, `${TAVILY_UNAUTHORIZED}${reason})`);
    const status = await raw(setup.base, '/tavily/search', { query: QUERY }, { authorization: `Bearer ${setup.deleted}` });
    t.is(status.status, 401, JSON.stringify(status.body));
  });

  test.serial(`[${name}] @tavily/core: no key (keyless mode) is a 401 Error, not a TavilyKeylessLimitError`, async (t) => {
    const error = await rejection(t, client('').search(QUERY), 'keyless search');
    checkTavilyError(t, error, 'keyless');
    // §7.4, missing key: the wording is given in full.
    t.is(error?.message, `${TAVILY_UNAUTHORIZED}no API key: send Authorization: Bearer <key> or api_key)`);
  });

  test.serial(`[${name}] @tavily/core: an exhausted allowance (432) rejects with Error naming the plan limit`, async (t) => {
    const setup = setupOf(name);
    const search = await rejection(t, client(setup.spent).search(QUERY), 'search');
    checkTavilyError(t, search, 'search');
    t.true(String(search?.message).startsWith(TAVILY_PLAN_LIMIT), describe(search));
    t.log(`allowance: ${describe(search)}`);
    const extract = await rejection(t, client(setup.spent).extract([siteUrl('/article')]), 'extract');
    checkTavilyError(t, extract, 'extract');
    t.true(String(extract?.message).startsWith(TAVILY_PLAN_LIMIT), describe(extract));
    const status = await raw(setup.base, '/tavily/search', { query: QUERY }, { authorization: `Bearer ${setup.spent}` });
    t.is(status.status, 432, JSON.stringify(status.body));
  });

  test.serial(`[${name}] @tavily/core: maxResults 21 is served as 20 (§5.1)`, async (t) => {
    const capped = await client(setupOf(name).key).search(QUERY, { maxResults: 21 });
    if (name === 'upstream') t.is(capped.results.length, 20, 'the upstream has more than enough results');
    else t.true(capped.results.length > 0 && capped.results.length <= 20);
  });

  /** A bad request through the SDK: a plain Error whose message is the 400 body's detail.error (raw request for the status). */
  const badRequest = async (t: ExecutionContext, label: string, call: () => Promise<unknown>, path: string, body: Record<string, unknown>, note = '') => {
    const setup = setupOf(name);
    const error = await rejection(t, call(), label, () => `${name === 'upstream' ? `the upstream was asked: ${JSON.stringify(lastUpstreamSearch())}; ` : ''}${note}`);
    if (!error) return;
    checkTavilyError(t, error, label);
    const reply = await raw(setup.base, path, body, { authorization: `Bearer ${setup.key}` });
    t.is(reply.status, 400, `${label}: ${reply.status} ${JSON.stringify(reply.body)}`);
    t.is(error?.message, reply.body?.detail?.error, `${label}: the SDK shows detail.error`);
    t.log(`${label}: ${reply.status} ${JSON.stringify(reply.body)}`);
  };

  test.serial(`[${name}] @tavily/core: an impossible start_date (2024-02-30) is a 400 Error (R9)`, async (t) => {
    const v1 = await v1Freshness(setupOf(name), `2024-02-30..${new Date().toISOString().slice(0, 10)}`);
    await badRequest(t, 'start_date 2024-02-30', () => client(setupOf(name).key).search(QUERY, { startDate: '2024-02-30' }), '/tavily/search', { query: QUERY, start_date: '2024-02-30' }, v1);
  });

  test.serial(`[${name}] @tavily/core: a reversed date range is a 400 Error (R9)`, async (t) => {
    await badRequest(t, 'reversed range', () => client(setupOf(name).key).search(QUERY, { startDate: '2024-05-02', endDate: '2024-05-01' }), '/tavily/search', { query: QUERY, start_date: '2024-05-02', end_date: '2024-05-01' });
  });

  test.serial(`[${name}] @tavily/core: an empty query is a 400 Error`, async (t) => {
    await badRequest(t, 'empty query', () => client(setupOf(name).key).search(''), '/tavily/search', { query: '' });
  });

  test.serial(`[${name}] @tavily/core: extract of 21 URLs is a 400 Error (urls: 1..20)`, async (t) => {
    const tooMany = Array.from({ length: 21 }, (_, i) => siteUrl(`/page-${i}`));
    await badRequest(t, '21 urls', () => client(setupOf(name).key).extract(tooMany), '/tavily/extract', { urls: tooMany });
  });
}

// ---------------------------------------------------------------------------------------------
// exa-js 2.23.0 (§5.2, §6.11, §7.5)

const EXA_TAGS = ['CRAWL_NOT_FOUND', 'CRAWL_TIMEOUT', 'CRAWL_UNKNOWN_ERROR'];

for (const name of SETUPS) {
  const client = (key: string) => new Exa(key, setupOf(name).base + '/exa');

  test.serial(`[${name}] exa-js: search with numResults 3 returns results with id, url, title and text`, async (t) => {
    const response = await client(setupOf(name).key).search(QUERY, { numResults: 3 });
    t.true(response.results.length > 0 && response.results.length <= 3, JSON.stringify(response.results).slice(0, 2000));
    t.is(typeof response.requestId, 'string');
    for (const result of response.results) {
      t.is(result.id, result.url, 'id: the URL');
      t.regex(result.url, /^https?:\/\//);
      t.is(typeof result.title, 'string');
      // exa-js asks for text by default: contents.text.maxCharacters 10000.
      t.is(typeof result.text, 'string', JSON.stringify(result));
      t.true(result.text.length > 0 && [...result.text].length <= 10_000);
    }
    if (name === 'embedded') {
      const paris = response.results.find((r) => r.url === 'https://paris.example/');
      t.truthy(paris, JSON.stringify(response.results.map((r) => r.url)));
      t.is(paris?.text, INDEX_PAGES[0]!.text);
      t.is(paris?.publishedDate, '2026-05-01T00:00:00.000Z');
    } else {
      t.deepEqual(response.results.map((r) => r.url), ['/article', '/second', '/third'].map(siteUrl));
      t.true(response.results[0]!.text.includes(ARTICLE_SENTENCE), 'text filled by the content chain');
    }
  });

  test.serial(`[${name}] exa-js: getContents([url], { text: true }) returns the page text; a bad URL is a statuses error`, async (t) => {
    const good = siteUrl('/article');
    const bad = siteUrl('/missing');
    const one = await client(setupOf(name).key).getContents([good], { text: true });
    t.is(one.results.length, 1, JSON.stringify(one));
    t.is(one.results[0]!.url, good);
    t.true(one.results[0]!.text.includes(ARTICLE_SENTENCE), one.results[0]!.text);
    t.false(/Copyright|Privacy/.test(one.results[0]!.text), 'boilerplate removed');
    t.is(typeof one.requestId, 'string');
    t.deepEqual((one as any).statuses, [{ id: good, status: 'success' }]);

    const both = await client(setupOf(name).key).getContents([good, bad], { text: true });
    t.deepEqual(both.results.map((r) => r.url), [good], JSON.stringify(both));
    const statuses = (both as any).statuses as any[];
    t.is(statuses?.length, 2, JSON.stringify(statuses));
    t.deepEqual(statuses?.[0], { id: good, status: 'success' });
    t.is(statuses?.[1]?.id, bad);
    t.is(statuses?.[1]?.status, 'error', JSON.stringify(statuses?.[1]));
    t.true(EXA_TAGS.includes(statuses?.[1]?.error?.tag), `error.tag: ${JSON.stringify(statuses?.[1])}`);
    t.log(`bad URL status: ${JSON.stringify(statuses?.[1])}`);
  });

  test.serial(`[${name}] exa-js: a deleted key raises ExaError 401 with the message`, async (t) => {
    const setup = setupOf(name);
    const reason = await v1Reason(setup, setup.deleted);
    for (const [label, call] of [
      ['search', () => client(setup.deleted).search(QUERY, { numResults: 3 })],
      ['getContents', () => client(setup.deleted).getContents([siteUrl('/article')], { text: true })],
    ] as const) {
      const error = await rejection(t, call(), label);
      t.true(error instanceof ExaError, `${label}: ${describe(error)}`);
      t.is(error?.statusCode, 401, `${label}: ${describe(error)}`);
      t.is(error?.message, `Invalid API key (searchgate: ${reason})`, label);
      t.is(typeof error?.requestId, 'string', `${label}: requestId carries the log_id`);
    }
  });

  test.serial(`[${name}] exa-js: an exhausted allowance raises ExaError 402`, async (t) => {
    const error = await rejection(t, client(setupOf(name).spent).search(QUERY, { numResults: 3 }), 'search');
    t.true(error instanceof ExaError, describe(error));
    t.is(error?.statusCode, 402, describe(error));
    t.regex(String(error?.message), /^daily allowance exhausted: /, describe(error));
  });

  /** A bad request through the SDK: ExaError 400 with the body's error as its message. */
  const badRequest = async (t: ExecutionContext, label: string, options: Record<string, unknown>, note = '') => {
    const error = await rejection(t, client(setupOf(name).key).search(QUERY, { numResults: 3, ...options }), label, () => `${name === 'upstream' ? `the upstream was asked: ${JSON.stringify(lastUpstreamSearch())}; ` : ''}${note}`);
    if (!error) return;
    t.true(error instanceof ExaError, `${label}: ${describe(error)}`);
    t.is(error?.statusCode, 400, `${label}: ${describe(error)}`);
    t.true(String(error?.message).length > 0 && !String(error?.message).startsWith('Unknown error'), `${label}: readable: ${describe(error)}`);
    t.is(typeof error?.requestId, 'string', `${label}: requestId`);
    t.log(`${label}: ${describe(error)}`);
  };

  test.serial(`[${name}] exa-js: numResults 101 is ExaError 400`, async (t) => {
    await badRequest(t, 'numResults 101', { numResults: 101 });
  });

  test.serial(`[${name}] exa-js: an unparseable startPublishedDate is ExaError 400 (R9)`, async (t) => {
    await badRequest(t, 'startPublishedDate "last tuesday"', { startPublishedDate: 'last tuesday' });
  });

  test.serial(`[${name}] exa-js: an impossible startPublishedDate (2024-02-30) is ExaError 400 (R9)`, async (t) => {
    const v1 = await v1Freshness(setupOf(name), `2024-02-30..${new Date().toISOString().slice(0, 10)}`);
    await badRequest(t, 'startPublishedDate 2024-02-30', { startPublishedDate: '2024-02-30' }, v1);
  });

  test.serial(`[${name}] exa-js: an impossible startPublishedDate date-time (2024-02-30T00:00:00.000Z) is ExaError 400 (R9)`, async (t) => {
    const v1 = await v1Freshness(setupOf(name), `2024-02-30..${new Date().toISOString().slice(0, 10)}`);
    await badRequest(t, 'startPublishedDate 2024-02-30T00:00:00.000Z', { startPublishedDate: '2024-02-30T00:00:00.000Z' }, v1);
  });

  test.serial(`[${name}] exa-js: numResults 60 is served as 50 (§5.2)`, async (t) => {
    const capped = await client(setupOf(name).key).search(QUERY, { numResults: 60, contents: false });
    if (name === 'upstream') t.is(capped.results.length, 50, '51–100 served as 50');
    else t.true(capped.results.length > 0 && capped.results.length <= 50);
  });
}

// ---------------------------------------------------------------------------------------------

test.serial('nothing crashed: both gateways still answer, no request ended in a 5xx, and no key was logged', async (t) => {
  for (const setup of [fixtures.embedded, fixtures.upstreamChain]) {
    const health = await fetch(`${setup.base}/healthz`);
    t.is(health.status, 200, setup.name);
    const after = await cohereAfter(setup);
    t.is(after.length, 1, `${setup.name}: still reranks`);
    const serverErrors = setup.gateway.logLines.filter((line) => /"status":5\d\d\b/.test(line));
    t.deepEqual(serverErrors, [], `${setup.name}: no 5xx in the access log`);
    t.true(setup.gateway.logLines.filter((line) => line.includes(`"msg":"request"`)).length > 0, `${setup.name}: the access log has the requests: ${setup.gateway.logLines.length} lines, first: ${setup.gateway.logLines[0]}`);
    // R3: no key in any log line.
    for (const key of [setup.key, setup.deleted, setup.spent]) t.false(setup.gateway.logLines.some((line) => line.includes(key)), `${setup.name}: a key was logged`);
  }
});

async function cohereAfter(setup: Setup) {
  const client = new CohereClient({ token: setup.key, environment: setup.base + '/cohere', maxRetries: 0 });
  return (await client.rerank({ model: 'rerank-english-v3.0', query: RERANK_QUERY, documents: RERANK_DOCUMENTS, topN: 1 })).results;
}
