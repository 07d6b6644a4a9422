/**
 * A fake of Cohere's Rerank API v2, plus the kit the other rerank fakes share (the key they expect,
 * a scoring "model").
 *
 * Sources:
 * - https://docs.cohere.com/reference/rerank (v2): POST /v2/rerank, Bearer auth, body {model, query,
 *   documents, top_n, max_tokens_per_doc}; reply {id, results: [{index, relevance_score}], meta}.
 *   The documented example (5 documents, "What is the capital of the United States?") is
 *   COHERE_EXAMPLE below, its scores verbatim.
 * - https://docs.cohere.com/reference/errors (cohere-ai/cohere-developer-experience
 *   fern/pages/cohere-api/errors.mdx): bodies {"message"}; the example messages used below.
 * - https://docs.cohere.com/docs/rate-limits: trial keys, 10 rerank calls/minute, 1,000 calls/month.
 * - cohere-ai/cohere-python src/cohere/v2/raw_client.py: rerank statuses 400…504, 498, 499.
 */
import { randomUUID } from 'node:crypto';
import { reply } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { startRerankFake, type RerankFake } from '../../helpers/vendor-fake.js';
import { COHERE_RERANK_V2_PATH, type CohereRerankResponse } from '../../../src/vendors/cohere/wire.js';

// ---- the shared kit ---------------------------------------------------------------------------

/** The key every fake expects; a test asserts it never reaches a client. */
export const VENDOR_KEY = 'vendor-secret-key-4242';

const words = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** The share of the query's words of four or more letters that the document contains: absolute, not relative to the batch. */
function termShare(query: string, document: string): number {
  const terms = [...new Set(words(query).filter((word) => word.length >= 4))];
  if (terms.length === 0) return 0;
  const present = new Set(words(document));
  return terms.filter((term) => present.has(term)).length / terms.length;
}

/** The fakes' one-label cross-encoder: a raw logit, and the probability its sigmoid activation gives. */
export const fakeLogit = (query: string, document: string) => 10 * termShare(query, document) - 5;
export const fakeProbability = (query: string, document: string) => 1 / (1 + Math.exp(-fakeLogit(query, document)));

// ---- Cohere -----------------------------------------------------------------------------------

export const COHERE_EXAMPLE = {
  query: 'What is the capital of the United States?',
  documents: [
    'Carson City is the capital city of the American state of Nevada.',
    'The Commonwealth of the Northern Mariana Islands is a group of islands in the Pacific Ocean. Its capital is Saipan.',
    'Capitalization or capitalisation in English grammar is the use of a capital letter at the start of a word. English usage varies from capitalization in other languages.',
    'Washington, D.C. (also known as simply Washington or D.C., and officially as the District of Columbia) is the capital of the United States. It is a federal district.',
    'Capital punishment has existed in the United States since beforethe United States was a country. As of 2017, capital punishment is legal in 30 of the 50 states.',
  ],
  /** The documented reply to top_n 3. */
  reply: {
    results: [
      { index: 3, relevance_score: 0.999071 },
      { index: 4, relevance_score: 0.7867867 },
      { index: 0, relevance_score: 0.32713068 },
    ],
    id: '07734bd2-2473-4f07-94e1-0d9f0e6843cf',
    meta: { api_version: { version: '2', is_experimental: false }, billed_units: { search_units: 1 } },
  },
};

export const cohereErrors = {
  invalidToken: reply(401, { message: 'invalid api token' }),
  perMinute: (retryAfterSeconds: number) =>
    reply(429, { message: 'You are past the per minute request limit, please wait and try again later.' }, { 'retry-after': String(retryAfterSeconds) }),
  trialMonth: reply(429, {
    id: '3e979f4a-9ff2-425f-acfb-076d09c5ab32',
    message:
      "You are using a Trial key, which is limited to 1000 API calls / month. You can continue to use the Trial key for free or upgrade to a Production key with higher rate limits at 'https://dashboard.cohere.com/api-keys'. Contact us on 'https://discord.gg/XW44jPfYJu' or email us at support@cohere.com with any questions",
  }),
  paymentRequired: reply(402, { message: 'Please add or update your payment method at https://dashboard.cohere.com/billing?tab=payment to continue' }),
  serverError: reply(500, { message: 'internal server error' }),
};

/** Scores like the documented example for its documents, like the fake cross-encoder for any other. */
export function cohereScore(query: string, document: string): number {
  const exampleIndex = query === COHERE_EXAMPLE.query ? COHERE_EXAMPLE.documents.indexOf(document) : -1;
  const documented = COHERE_EXAMPLE.reply.results.find((result) => result.index === exampleIndex);
  return documented ? documented.relevance_score : fakeProbability(query, document);
}

export function startCohereFake(apiKey = VENDOR_KEY): Promise<RerankFake> {
  return startRerankFake({
    paths: [COHERE_RERANK_V2_PATH],
    notFound: reply(404, { message: '404 page not found' }),
    refuse: ({ headers }) => {
      if (!headers.authorization) return reply(401, { message: 'no api key supplied' });
      return headers.authorization === `Bearer ${apiKey}` ? undefined : cohereErrors.invalidToken;
    },
    answer: ({ body }, res) => {
      if (typeof body?.model !== 'string') return sendJson(res, 400, { message: 'a model parameter is required for this endpoint.' });
      if (typeof body.query !== 'string' || body.query.trim() === '') {
        return sendJson(res, 400, { message: 'invalid request: query must not be empty or be only whitespace' });
      }
      const documents = body.documents as string[] | undefined;
      if (!Array.isArray(documents) || documents.length === 0) return sendJson(res, 400, { message: 'invalid request: list of documents must not be empty' });
      const results = documents
        .map((document, index) => ({ index, relevance_score: cohereScore(body.query, document) }))
        .sort((a, b) => b.relevance_score - a.relevance_score)
        .slice(0, typeof body.top_n === 'number' ? body.top_n : documents.length);
      const answer: CohereRerankResponse = { id: randomUUID(), results, meta: COHERE_EXAMPLE.reply.meta };
      sendJson(res, 200, answer);
    },
  });
}
