/**
 * A fake of Voyage AI's reranker endpoint.
 *
 * Sources:
 * - https://docs.voyageai.com/reference/reranker-api: POST https://api.voyageai.com/v1/rerank, Bearer
 *   auth, body {query, documents (≤ 1,000), model, top_k, return_documents, truncation}; reply
 *   {object: "list", data: [{index, relevance_score, document?}], model, usage: {total_tokens}}.
 * - https://docs.voyageai.com/docs/reranker: the example query "When is Apple's conference call
 *   scheduled?" over six documents with rerank-2.5, top_k 3, and its scores 0.94140625, 0.28515625,
 *   0.255859375 (VOYAGE_EXAMPLE below, verbatim).
 * - https://docs.voyageai.com/docs/error-codes: 400, 401, 403 (forbidden IP), 429, 500, 502/503/504;
 *   voyage-ai/voyageai-python voyageai/api_resources/api_requestor.py reads errors from {"detail"}.
 * - Error wordings seen from the live API and quoted in public client code (not in Voyage's docs):
 *   401 "Provided API key is invalid.", 429 without a payment method ("reduced rate limits of 3 RPM
 *   and 10K TPM"), 403 "Your account has run out of credit.".
 */
import { reply } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { VENDOR_KEY, fakeProbability } from '../cohere/fake.js';
import { startRerankFake, type RerankFake } from '../../helpers/vendor-fake.js';
import { VOYAGE_MAX_DOCUMENTS, VOYAGE_RERANK_PATH, type VoyageRerankResponse } from '../../../src/vendors/voyage/wire.js';

export const VOYAGE_EXAMPLE = {
  query: "When is Apple's conference call scheduled?",
  documents: [
    'The Mediterranean diet emphasizes fish, olive oil, and vegetables, believed to reduce chronic diseases.',
    'Photosynthesis in plants converts light energy into glucose and produces essential oxygen.',
    '20th-century innovations, from radios to smartphones, centered on electronic advancements.',
    'Rivers provide water, irrigation, and habitat for aquatic species, vital for ecosystems.',
    'Apple’s conference call to discuss fourth fiscal quarter results and business updates is scheduled for Thursday, November 2, 2023 at 2:00 p.m. PT / 5:00 p.m. ET.',
    "Shakespeare's works, like 'Hamlet' and 'A Midsummer Night's Dream,' endure in literature.",
  ],
  /** The documented top_k 3 results, by document index. */
  scores: new Map([
    [4, 0.94140625],
    [2, 0.28515625],
    [1, 0.255859375],
  ]),
};

export const voyageErrors = {
  invalidKey: reply(401, { detail: 'Provided API key is invalid.' }),
  rateLimited: (retryAfterSeconds: number) =>
    reply(
      429,
      {
        detail:
          'You have not yet added your payment method in the billing page and will have reduced rate limits of 3 RPM and 10K TPM.  Please add your payment method in the billing page (https://dash.voyageai.com/billing/payment-methods) to unlock our standard rate limits (https://docs.voyageai.com/docs/rate-limits).',
      },
      { 'retry-after': String(retryAfterSeconds) },
    ),
  outOfCredit: reply(403, { detail: 'Your account has run out of credit.' }),
  forbiddenIp: reply(403, { detail: 'Forbidden' }),
  unavailable: reply(503, { detail: 'The server is overloaded or not ready yet.' }),
};

export function voyageScore(query: string, document: string): number {
  const exampleIndex = query === VOYAGE_EXAMPLE.query ? VOYAGE_EXAMPLE.documents.indexOf(document) : -1;
  return VOYAGE_EXAMPLE.scores.get(exampleIndex) ?? fakeProbability(query, document);
}

export function startVoyageFake(apiKey = VENDOR_KEY): Promise<RerankFake> {
  return startRerankFake({
    paths: [VOYAGE_RERANK_PATH],
    notFound: reply(404, { detail: 'Not Found' }),
    refuse: ({ headers }) => (headers.authorization === `Bearer ${apiKey}` ? undefined : voyageErrors.invalidKey),
    answer: ({ body }, res) => {
      const documents = body?.documents as string[] | undefined;
      if (typeof body?.query !== 'string' || !Array.isArray(documents) || typeof body.model !== 'string') {
        return sendJson(res, 400, { detail: 'Request body is invalid: query, documents and model are required.' });
      }
      if (documents.length > VOYAGE_MAX_DOCUMENTS) return sendJson(res, 400, { detail: 'The number of documents cannot exceed 1000.' });
      const data = documents
        .map((document, index) => ({
          index,
          relevance_score: voyageScore(body.query, document),
          ...(body.return_documents === true ? { document } : {}),
        }))
        .sort((a, b) => b.relevance_score - a.relevance_score)
        .slice(0, typeof body.top_k === 'number' ? body.top_k : documents.length);
      const tokens = documents.reduce((sum, document) => sum + document.split(/\s+/).length, 0);
      const answer: VoyageRerankResponse = { object: 'list', data, model: body.model, usage: { total_tokens: tokens } };
      sendJson(res, 200, answer);
    },
  });
}
