import test, { type ExecutionContext } from 'ava';
import { expectSearchOk } from '../../helpers/faults.js';
import { searchGateway } from '../../helpers/provider-gateways.js';
import { expectUpstreamError, searchCall, type FailureCase } from '../../helpers/upstream-errors.js';
import { EXA_DOCUMENTS, EXA_KEY, startFakeExa, type ExaDocument, type ExaFailure } from './fake.js';
import { pathOf } from '../../helpers/vendor-fake.js';

async function setup(
  t: ExecutionContext,
  { provider = {}, corpus, now }: { provider?: Record<string, unknown>; corpus?: ExaDocument[]; now?: () => number } = {},
) {
  const exa = await startFakeExa(corpus ? { corpus } : {});
  const gateway = await searchGateway(t, exa, 'exa-main', { type: 'exa', baseUrl: exa.url, apiKey: EXA_KEY, ...provider }, now ? { now } : {});
  return { exa, gateway };
}

test('snippet mode: the documented request, with highlights as snippets and publishedDate as datePublished', async (t) => {
  const { exa, gateway } = await setup(t);
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'large language models', count: 3, language: 'de' }));

  t.is(exa.requests.length, 1);
  const [request] = exa.requests;
  t.is(request!.method, 'POST');
  t.is(pathOf(request!), '/search');
  t.is(request!.headers['x-api-key'], EXA_KEY);
  t.is(request!.headers.authorization, undefined);
  // Exa has no language parameter: nothing language-like is invented.
  t.deepEqual(request!.body, {
    query: 'large language models',
    type: 'auto',
    numResults: 3,
    contents: { highlights: { maxCharacters: 500 } },
  });

  const results = body.data.webPages.value as any[];
  t.deepEqual(
    results.map((result) => result.url),
    EXA_DOCUMENTS.slice(0, 3).map((document) => document.url),
  );
  t.deepEqual(
    results.map((result) => result.name),
    EXA_DOCUMENTS.slice(0, 3).map((document) => document.title),
  );
  t.is(results[0].snippet, 'Such requirements have limited their adoption...');
  t.is(results[2].snippet, 'A Transformer is a model architecture that eschews recurrence … relies entirely on an attention mechanism');
  t.is(results[0].datePublished, '2023-11-16T01:36:32.547Z');
  t.is(results[2].datePublished, '2024-02-03T09:00:00.000Z');
  for (const result of results) t.false('text' in result);
});

test('a date range and domain filters are sent as Exa parameters and honoured', async (t) => {
  const { exa, gateway } = await setup(t);
  const body = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', {
      query: 'llm papers',
      count: 10,
      freshness: '2023-11-01..2023-11-30',
      includeDomains: ['arxiv.org', 'paperswithcode.com'],
      excludeDomains: ['blog.example.org'],
    }),
  );
  const sent = exa.requests[0]!.body;
  t.is(sent.startPublishedDate, '2023-11-01T00:00:00.000Z');
  t.is(sent.endPublishedDate, '2023-12-01T00:00:00.000Z', 'the end of the last day, exclusive');
  t.deepEqual(sent.includeDomains, ['arxiv.org', 'paperswithcode.com']);
  t.deepEqual(sent.excludeDomains, ['blog.example.org']);
  t.is(sent.numResults, 10, 'native filters need no over-fetch');
  t.deepEqual(
    body.data.webPages.value.map((result) => result.url),
    ['https://arxiv.org/pdf/2307.06435.pdf', 'https://arxiv.org/pdf/2303.17580.pdf'],
  );
});

test('a freshness preset becomes a start date on the gateway clock, with no end', async (t) => {
  const now = Date.parse('2024-02-10T12:00:00Z');
  const { exa, gateway } = await setup(t, { now: () => now });
  const body = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'transformers', freshness: 'oneMonth' }));
  const sent = exa.requests[0]!.body;
  t.is(sent.startPublishedDate, '2024-01-10T12:00:00.000Z');
  t.false('endPublishedDate' in sent);
  t.deepEqual(
    body.data.webPages.value.map((result) => result.url),
    ['https://paperswithcode.com/method/transformer'],
  );
});

test('text mode asks Exa for page text up to max_characters', async (t) => {
  const { exa, gateway } = await setup(t);
  const body = await expectSearchOk(
    t,
    await gateway.post('/v1/web-search', { query: 'llm', count: 2, contents: { text: { max_characters: 40 } } }),
  );
  t.deepEqual(exa.requests[0]!.body.contents, { text: { maxCharacters: 40 } });
  const results = body.data.webPages.value as any[];
  t.deepEqual(
    results.map((result) => result.text),
    EXA_DOCUMENTS.slice(0, 2).map((document) => document.text.slice(0, 40)),
  );
  for (const result of results) t.false('snippet' in result);
});

test('count: one call of numResults, capped at the configured maximum (Exa has no offset)', async (t) => {
  const corpus = Array.from({ length: 120 }, (_, i) => ({
    ...EXA_DOCUMENTS[2]!,
    id: `https://docs.example.com/${i}`,
    url: `https://docs.example.com/${i}`,
    title: `Document ${i}`,
  }));
  const { exa, gateway } = await setup(t, { corpus });
  const full = await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'docs', count: 50 }));
  t.is(full.data.webPages.value.length, 50);
  t.deepEqual(exa.requests.map((request) => request.body.numResults), [50]);

  const capped = await setup(t, { corpus, provider: { maxResults: 20 } });
  const body = await expectSearchOk(t, await capped.gateway.post('/v1/web-search', { query: 'docs', count: 50 }));
  t.deepEqual(
    body.data.webPages.value.map((result) => result.name),
    corpus.slice(0, 20).map((document) => document.title),
  );
  t.deepEqual(capped.exa.requests.map((request) => request.body.numResults), [20], 'no second page is asked for');
});

test('summary: Exa summaries only when nativeSummary is set; otherwise the gateway derives one', async (t) => {
  const native = await setup(t, { provider: { nativeSummary: true } });
  const withSummaries = await expectSearchOk(t, await native.gateway.post('/v1/web-search', { query: 'llm', count: 2, summary: true }));
  t.deepEqual(native.exa.requests[0]!.body.contents, { highlights: { maxCharacters: 500 }, summary: { query: 'llm' } });
  t.deepEqual(
    withSummaries.data.webPages.value.map((result: any) => result.summary),
    EXA_DOCUMENTS.slice(0, 2).map((document) => document.summary),
  );

  const plain = await setup(t);
  const derived = await expectSearchOk(t, await plain.gateway.post('/v1/web-search', { query: 'llm', count: 1, summary: true }));
  t.deepEqual(plain.exa.requests[0]!.body.contents, { highlights: { maxCharacters: 500 } });
  t.is((derived.data.webPages.value[0] as any).summary, EXA_DOCUMENTS[0]!.highlights[0]);
});

test('category, userLocation and search type come from the provider config', async (t) => {
  const { exa, gateway } = await setup(t, { provider: { searchType: 'fast', category: 'research paper', userLocation: 'us' } });
  await expectSearchOk(t, await gateway.post('/v1/web-search', { query: 'llm', count: 1 }));
  const sent = exa.requests[0]!.body;
  t.is(sent.type, 'fast');
  t.is(sent.category, 'research paper');
  t.is(sent.userLocation, 'US');
});

const WRONG_KEY = 'exa-wrong-key-0000';

const FAILURES: Array<FailureCase<ExaFailure | 'wrong_key'>> = [
  { failure: 'wrong_key', options: { apiKey: WRONG_KEY }, status: 502, kind: 'auth', mentions: /exa-main: HTTP 401/ },
  { failure: 'rate_limited', status: 503, kind: 'rate_limited', retryAfter: '7', mentions: /exa-main: HTTP 429/ },
  { failure: 'no_credits', status: 503, kind: 'quota', mentions: /exa-main: HTTP 402: You have run out of credits/ },
  { failure: 'server_error', status: 502, kind: 'unavailable', mentions: /exa-main: HTTP 500/ },
  { failure: 'malformed', status: 502, kind: 'garbage', mentions: /exa-main: reply is not JSON/ },
  { failure: 'wrong_shape', status: 502, kind: 'garbage', mentions: /exa-main: reply has no results array/ },
  { failure: 'stall', options: { timeoutMs: 150 }, status: 504, kind: 'timeout', mentions: /exa-main/ },
];

for (const { failure, options, ...expected } of FAILURES) {
  test(`upstream failure ${failure} becomes our ${expected.status}, naming the provider but never the key`, async (t) => {
    const { exa, gateway } = await setup(t, { provider: options });
    const fail = () => failure !== 'wrong_key' && exa.fail(failure);
    await expectUpstreamError(t, { ...searchCall(gateway, 'exa-main', 'llm'), secrets: [EXA_KEY, WRONG_KEY], requests: exa.requests, fail }, expected);
  });
}
