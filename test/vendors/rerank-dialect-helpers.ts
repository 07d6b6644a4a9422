/**
 * What the rerank dialect tests share (test/vendors/{cohere,jina,voyage}/dialect.test.ts and
 * test/dialects/rerank-family.test.ts; ../shared/spec/dialects.md §3–4, §7.1–7.3): a gateway whose
 * default model is served by a vendor fake through its real provider, account keys (made as the
 * search dialects' bench makes them, dialect-bench.ts), the documents every test ranks, the
 * Cohere-shaped answer as the family's routes must give it, and the §7 error table as rows that
 * provoke each failure on any rerank route.
 */
import type { ExecutionContext } from 'ava';
import { accountKeys, postJson, type AccountKey, type AccountLimits } from '../helpers/dialect-bench.js';
import { metricValue, stall, validators, type Fault } from '../helpers/faults.js';
import { startGateway, TEST_KEY, type RunningGateway } from '../helpers/gateway.js';
import type { RerankFake } from '../helpers/vendor-fake.js';
import { VENDOR_KEY, startCohereFake } from './cohere/fake.js';
import { startVoyageFake, voyageErrors } from './voyage/fake.js';

export const QUERY = 'capital of France';
export const PARIS = 'Paris is the capital of France.';
export const LYON = 'Lyon is a large city in France.';
export const BANANAS = 'Bananas are yellow.';
export const DOCUMENTS = [BANANAS, PARIS, LYON];
/** The indices of DOCUMENTS best first, as the fakes score them (the share of the query's long words a document has). */
export const RANKED = [1, 2, 0];

/**
 * The clock of every dialect gateway. Fixed, so that an account allowed one request a minute is
 * refused on its second request however slowly the test runs.
 */
const NOW = Date.parse('2026-11-02T12:00:30Z');

export interface DialectGateway {
  gateway: RunningGateway;
  /** The vendor fake behind service-reranker-v1. */
  upstream: RerankFake;
  /** A new account account-N (its own limits where given, else the gateway's defaults) and a key of it. */
  account(limits?: AccountLimits): Promise<AccountKey>;
  /** Posts `body` (JSON; a string is sent as it is) to `path` with `key` as the Bearer key (the operator's unless told; null: no Authorization). */
  post(path: string, body: unknown, key?: string | null): Promise<Response>;
}

export interface DialectGatewayOptions {
  /** The vendor whose fake (through searchgate's provider for it) serves service-reranker-v1: Voyage's reports token counts, Cohere's none. */
  upstream?: 'voyage' | 'cohere';
  /** Merged into that provider's config entry (a short timeoutMs). */
  provider?: Record<string, unknown>;
  /** Providers beside it. */
  providers?: Record<string, unknown>;
  /** Merged into the accounts section (weights). */
  accounts?: Record<string, unknown>;
  /** Other config sections, replacing the defaults given here (rerank, dialects, cache). */
  config?: Record<string, unknown>;
}

/**
 * A gateway whose default model is served by a vendor fake alone: no cache, no retries, and no pause
 * after an upstream's rate limit, so that every request reaches the fake once. Accounts get 100
 * units a day and no rate windows unless they say otherwise. Everything closes when the test ends.
 */
export async function dialectGateway(t: ExecutionContext, options: DialectGatewayOptions = {}): Promise<DialectGateway> {
  const type = options.upstream ?? 'voyage';
  const upstream = type === 'voyage' ? await startVoyageFake() : await startCohereFake();
  t.teardown(() => upstream.close());
  const gateway = await startGateway(
    {
      providers: { up: { type, baseUrl: upstream.url, apiKey: VENDOR_KEY, ...options.provider }, ...options.providers },
      rerank: { models: { 'service-reranker-v1': { chain: ['up'] } } },
      cache: { enabled: false },
      retry: { retries: 0 },
      health: { rateLimitedPauseMs: 0 },
      accounts: { defaults: { dailyAllowance: 100, ratePerSecond: 0, ratePerMinute: 0 }, ...options.accounts },
      ...options.config,
    },
    { now: () => NOW },
  );
  t.teardown(() => gateway.close());
  return {
    gateway,
    upstream,
    account: accountKeys(gateway, { name: 'account', now: () => NOW }),
    post: (path, body, key = TEST_KEY) => postJson(gateway, path, body, key === null ? {} : { authorization: `Bearer ${key}` }),
  };
}

// ---- the Cohere-shaped answer of the v1/v2 family ---------------------------------------------------

interface FamilyExpectation {
  /** meta.api_version.version */
  version: '1' | '2';
  /** The document indices, best first. */
  ranked?: readonly number[];
  /** Each result's document text, when return_documents was true. */
  documents?: readonly string[];
  /** meta.billed_units.search_units */
  units?: number;
  model?: string;
}

/**
 * A 200 in the family's body (§4.1–4.2): LangSearch's envelope (code, log_id, msg, rerankScore) and
 * Cohere's id and meta, every score in [0, 1] and equal in both fields, `document` an object
 * exactly when asked for (litellm refuses null). Returns the body.
 */
export async function expectFamilyAnswer(t: ExecutionContext, response: Response, expected: FamilyExpectation) {
  const text = await response.text();
  t.is(response.status, 200, text);
  const body = JSON.parse(text);
  t.true(validators.rerank(body), JSON.stringify(validators.rerank.errors));
  t.deepEqual(Object.keys(body).sort(), ['code', 'id', 'log_id', 'meta', 'model', 'msg', 'results']);
  t.like(body, { code: 200, msg: null, model: expected.model ?? 'service-reranker-v1' });
  t.is(body.id, body.log_id);
  t.is(response.headers.get('x-log-id'), body.log_id);
  t.deepEqual(body.meta, { api_version: { version: expected.version }, billed_units: { search_units: expected.units ?? 0 } });
  t.deepEqual(
    body.results.map((result: { index: number }) => result.index),
    expected.ranked ?? RANKED,
  );
  for (const result of body.results) {
    t.is(result.rerankScore, result.relevance_score);
    t.true(result.relevance_score >= 0 && result.relevance_score <= 1);
  }
  if (expected.documents) t.deepEqual(body.results.map((result: { document: unknown }) => result.document), expected.documents.map((text) => ({ text })));
  else t.false(body.results.some((result: object) => 'document' in result), 'no document unless return_documents');
  return body;
}

/** Requests this gateway counted under the `dialect` metric label (and route template, when given). */
export const requestsCounted = (gateway: RunningGateway, dialect: string, route?: string) =>
  metricValue(gateway, 'searchgate_http_requests_total', { dialect, ...(route ? { route } : {}) });

// ---- the §7 error table --------------------------------------------------------------------------

/** One row of §7.1–7.3: how to provoke it on any rerank route, and what searchgate's own reason says. */
export interface ErrorRow {
  /** As §7 names it. */
  condition: string;
  status: number;
  /** /v1's message: the whole message of the family's body, the reason after Voyage's sentence. */
  reason: RegExp;
  /** Headers the answer must carry. */
  headers?: Record<string, RegExp>;
  /** Provider options the row needs (a short timeout for a stall). */
  provider?: Record<string, unknown>;
  /** Sends one request to `path` that meets the condition; `body` is a valid request of that route. */
  provoke(setup: DialectGateway, path: string, body: Record<string, unknown>): Promise<Response>;
}

const ACCOUNT_HEADERS = { 'x-ratelimit-limit': /^\d+$/, 'x-ratelimit-remaining': /^\d+$/, 'x-ratelimit-reset': /^\d+$/ };

/** Sends `body` twice with a new account's key: the first is served, the second meets the account's limit. */
async function secondRequest(setup: DialectGateway, path: string, body: unknown, limits: AccountLimits): Promise<Response> {
  const { key } = await setup.account(limits);
  const first = await setup.post(path, body, key);
  if (first.status !== 200) throw new Error(`the first request was not served: ${first.status} ${await first.text()}`);
  return setup.post(path, body, key);
}

/** Sends the request with the key of a new account after `spoil` (deleting the key, disabling the account). */
const spoiledKey =
  (spoil: (account: AccountKey) => Promise<void>): ErrorRow['provoke'] =>
  async (setup, path, body) => {
    const account = await setup.account();
    await spoil(account);
    return setup.post(path, body, account.key);
  };

/** The upstream (Voyage's fake) answers the request with `fault`. */
const upstreamAnswers =
  (fault: Fault): ErrorRow['provoke'] =>
  (setup, path, body) => {
    setup.upstream.failNext(fault);
    return setup.post(path, body);
  };

export const ERROR_ROWS: readonly ErrorRow[] = [
  { condition: 'missing key', status: 401, reason: /^missing Authorization header/, provoke: (setup, path, body) => setup.post(path, body, null) },
  { condition: 'bad key', status: 401, reason: /^invalid API key$/, provoke: (setup, path, body) => setup.post(path, body, 'sk-not-a-key-000') },
  { condition: 'deleted key', status: 401, reason: /^API key sg_\w+… has been deleted/, provoke: spoiledKey((account) => account.deleteKey()) },
  { condition: 'disabled account', status: 403, reason: /^account "account-\d+" is disabled/, provoke: spoiledKey((account) => account.disableAccount()) },
  {
    // R4: validation comes first, so a malformed request is a 400 whatever its key.
    condition: 'invalid request',
    status: 400,
    reason: /^documents must NOT have fewer than 1 items$/,
    provoke: (setup, path, body) => setup.post(path, { ...body, documents: [] }, 'sk-not-a-key-000'),
  },
  {
    condition: 'allowance exhausted',
    status: 429,
    reason: /^daily allowance exhausted/,
    headers: { ...ACCOUNT_HEADERS, 'retry-after': /^\d+$/, 'x-ratelimit-scope': /^day$/ },
    provoke: (setup, path, body) => secondRequest(setup, path, body, { dailyAllowance: 1 }),
  },
  {
    condition: 'rate limited',
    status: 429,
    reason: /^rate limit exceeded: this account may make 1 request per minute/,
    headers: { ...ACCOUNT_HEADERS, 'retry-after': /^\d+$/, 'x-ratelimit-scope': /^minute$/ },
    provoke: (setup, path, body) => secondRequest(setup, path, body, { ratePerMinute: 1 }),
  },
  { condition: 'upstream failure', status: 502, reason: /^rerank provider failure \(up: /, provoke: upstreamAnswers(voyageErrors.unavailable) },
  {
    // The first request meets the upstream's 429; the next ones find it paused for the 4 s it asked.
    condition: 'upstream unavailable',
    status: 503,
    reason: /^(every rerank provider is rate-limiting this gateway or out of quota|no rerank provider is available right now); try again later \(up: /,
    headers: { 'retry-after': /^4$/ },
    provoke: upstreamAnswers(voyageErrors.rateLimited(4)),
  },
  { condition: 'upstream timeout', status: 504, reason: /^rerank provider timed out/, provider: { timeoutMs: 300 }, provoke: upstreamAnswers(stall()) },
];

/** A rerank route and a valid request of it. */
export interface RouteUnderTest {
  path: string;
  body: Record<string, unknown>;
}

/**
 * One §7 row on each of `routes`, on one gateway (upstream: Voyage's fake): `readReason` holds the
 * error body to the route's shape and returns searchgate's reason in it, which must be the row's.
 */
export async function checkErrorRow(
  t: ExecutionContext,
  row: ErrorRow,
  routes: readonly RouteUnderTest[],
  readReason: (gateway: RunningGateway, response: Response) => Promise<string>,
): Promise<void> {
  const setup = await dialectGateway(t, { provider: row.provider ?? {} });
  for (const route of routes) {
    const response = await row.provoke(setup, route.path, route.body);
    t.is(response.status, row.status, route.path);
    for (const [name, value] of Object.entries(row.headers ?? {})) t.regex(response.headers.get(name) ?? '', value, `${route.path}: ${name}`);
    t.regex(await readReason(setup.gateway, response), row.reason, route.path);
  }
}
