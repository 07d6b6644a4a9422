/**
 * A fake of Exa's API on loopback, speaking its documented wire format:
 * - POST /search {query, type, numResults (≤ 100), includeDomains, excludeDomains,
 *   startPublishedDate, endPublishedDate, contents: {text | highlights | summary}} →
 *   {requestId, resolvedSearchType, results: [{id, url, title, publishedDate, author, score, text?,
 *   highlights?, highlightScores?, summary?}], searchTime, costDollars}
 *   (https://exa.ai/docs/reference/search; exa-labs/openapi-spec exa-openapi-spec.yaml,
 *   SearchResponse and ResultWithContent, whose examples are the fixtures below);
 * - POST /contents {urls, text} → {requestId, results, statuses: [{id, status, error: {tag,
 *   httpStatusCode}}]}, a URL it cannot crawl being a status of a 200 reply
 *   (https://exa.ai/docs/reference/get-contents; exa-labs/agent-skills
 *   skills/build-with-exa/references/contents.md);
 * - the key in x-api-key (or Authorization: Bearer), errors as {requestId, error, tag}: 401 for a
 *   missing or wrong key, 402 NO_MORE_CREDITS, 429, 5xx (https://exa.ai/docs/reference/error-codes).
 *   The 401 and 429 tag names are not in the docs we could read and are our guess.
 */
import type { ServerResponse } from 'node:http';
import { rawReply, stall } from '../../helpers/faults.js';
import { sendJson } from '../../helpers/gateway.js';
import { pathOf, startVendorFake, withinSite } from '../../helpers/vendor-fake.js';

export const EXA_KEY = 'exa-0123456789abcdef-test-key';

export interface ExaDocument {
  id: string;
  url: string;
  title: string;
  publishedDate?: string;
  author?: string;
  score: number;
  text: string;
  highlights: string[];
  summary: string;
}

/** The result examples of Exa's OpenAPI spec (Result/ResultWithContent and its subpage example). */
export const EXA_DOCUMENTS: ExaDocument[] = [
  {
    id: 'https://arxiv.org/abs/2307.06435',
    url: 'https://arxiv.org/pdf/2307.06435.pdf',
    title: 'A Comprehensive Overview of Large Language Models',
    publishedDate: '2023-11-16T01:36:32.547Z',
    author: 'Humza  Naveed, University of Engineering and Technology (UET), Lahore, Pakistan',
    score: 0.4600165784358978,
    text: 'Abstract Large Language Models (LLMs) have recently demonstrated remarkable capabilities in natural language processing tasks and beyond. This success of LLMs has led to a large influx of research contributions in this direction.',
    highlights: ['Such requirements have limited their adoption...'],
    summary: 'This overview paper on Large Language Models (LLMs) highlights key developments...',
  },
  {
    id: 'https://arxiv.org/abs/2303.17580',
    url: 'https://arxiv.org/pdf/2303.17580.pdf',
    title: 'HuggingGPT: Solving AI Tasks with ChatGPT and its Friends in Hugging Face',
    publishedDate: '2023-11-16T01:36:20.486Z',
    author: 'Yongliang  Shen, Microsoft Research Asia',
    score: 0.32679107785224915,
    text: 'HuggingGPT: Solving AI Tasks with ChatGPT and its Friends in Hugging Face Date Published: 2023-05-25 Abstract Solving complicated AI tasks with different domains and modalities is a key step toward artificial general intelligence.',
    highlights: ['2) Recently, some researchers started to investigate the integration of using tools or models in LLMs  .'],
    summary:
      'HuggingGPT is a framework using ChatGPT as a central controller to orchestrate various AI models from Hugging Face to solve complex tasks.',
  },
  {
    id: 'https://paperswithcode.com/method/transformer',
    url: 'https://paperswithcode.com/method/transformer',
    title: 'Transformer Explained | Papers With Code',
    publishedDate: '2024-02-03T09:00:00.000Z',
    score: 0.31,
    text: 'A Transformer is a model architecture that eschews recurrence and instead relies entirely on an attention mechanism to draw global dependencies between input and output.',
    highlights: ['A Transformer is a model architecture that eschews recurrence', 'relies entirely on an attention mechanism'],
    summary: 'The Transformer relies on attention instead of recurrence.',
  },
  {
    id: 'https://blog.example.org/llm-notes',
    url: 'https://blog.example.org/llm-notes',
    title: 'Notes on LLM capabilities',
    score: 0.2,
    text: 'Undated notes on what large language models can and cannot do.',
    highlights: ['what large language models can and cannot do'],
    summary: 'Notes on LLM limits.',
  },
];

export type ExaFailure = 'rate_limited' | 'no_credits' | 'server_error' | 'malformed' | 'wrong_shape' | 'stall';

const requestId = () => Math.random().toString(16).slice(2).padEnd(32, '0');

function exaError(res: ServerResponse, status: number, error: string, tag: string, headers: Record<string, string> = {}) {
  sendJson(res, status, { requestId: requestId(), error, tag }, headers);
}

function searchReply(body: any, corpus: readonly ExaDocument[], res: ServerResponse) {
  if (typeof body?.query !== 'string' || body.query.trim() === '') {
    return exaError(res, 400, 'query is required', 'INVALID_REQUEST_BODY');
  }
  const numResults = body.numResults ?? 10;
  if (!Number.isInteger(numResults) || numResults < 1 || numResults > 100) {
    return exaError(res, 400, 'numResults must be between 1 and 100', 'INVALID_NUM_RESULTS');
  }
  const include: string[] = body.includeDomains ?? [];
  const exclude: string[] = body.excludeDomains ?? [];
  const start = body.startPublishedDate ? Date.parse(body.startPublishedDate) : null;
  const end = body.endPublishedDate ? Date.parse(body.endPublishedDate) : null;
  const matching = corpus.filter((document) => {
    if (include.length && !include.some((domain) => withinSite(document.url, domain))) return false;
    if (exclude.some((domain) => withinSite(document.url, domain))) return false;
    // Exa's hard date filters drop undated pages.
    if (start !== null || end !== null) {
      if (!document.publishedDate) return false;
      const published = Date.parse(document.publishedDate);
      if ((start !== null && published < start) || (end !== null && published > end)) return false;
    }
    return true;
  });
  const contents = body.contents ?? {};
  const results = matching.slice(0, numResults).map((document) => {
    const { text, highlights, summary, ...metadata } = document;
    const result: Record<string, unknown> = { ...metadata };
    if (contents.text) result.text = text.slice(0, contents.text.maxCharacters ?? text.length);
    if (contents.highlights) {
      const budget = contents.highlights.maxCharacters ?? Number.POSITIVE_INFINITY;
      result.highlights = highlights.map((highlight) => highlight.slice(0, budget));
      result.highlightScores = highlights.map(() => 0.4600165784358978);
    }
    if (contents.summary) result.summary = summary;
    return result;
  });
  sendJson(res, 200, { requestId: requestId(), resolvedSearchType: 'neural', results, searchTime: 860, costDollars: { total: 0.007 } });
}

function contentsReply(body: any, corpus: readonly ExaDocument[], res: ServerResponse) {
  const urls: unknown = body?.urls ?? body?.ids;
  if (!Array.isArray(urls) || urls.length === 0) return exaError(res, 400, 'urls is required', 'INVALID_REQUEST_BODY');
  const maxCharacters: number | undefined = typeof body.text === 'object' ? body.text.maxCharacters : undefined;
  const results: Array<Record<string, unknown>> = [];
  const statuses: Array<Record<string, unknown>> = [];
  for (const url of urls as string[]) {
    const document = corpus.find((candidate) => candidate.url === url || candidate.id === url);
    if (!document) {
      statuses.push({ id: url, status: 'error', error: { tag: 'CRAWL_NOT_FOUND', httpStatusCode: 404 } });
      continue;
    }
    statuses.push({ id: url, status: 'success' });
    results.push({
      id: document.id,
      url: document.url,
      title: document.title,
      publishedDate: document.publishedDate ?? null,
      author: document.author ?? null,
      ...(body.text ? { text: document.text.slice(0, maxCharacters ?? document.text.length) } : {}),
    });
  }
  sendJson(res, 200, { requestId: requestId(), results, statuses, costDollars: { total: 0.001 * results.length } });
}

export async function startFakeExa(options: { corpus?: readonly ExaDocument[]; retryAfterSeconds?: number } = {}) {
  const corpus = options.corpus ?? EXA_DOCUMENTS;
  return startVendorFake<ExaFailure>({
    refuse: (request) => {
      const apiKey = request.headers['x-api-key'] ?? request.headers.authorization?.replace(/^Bearer\s+/i, '');
      return apiKey === EXA_KEY ? undefined : (_request, res) => exaError(res, 401, 'Invalid API key', 'INVALID_API_KEY');
    },
    failures: {
      rate_limited: (_request, res) => exaError(res, 429, 'You have exceeded your rate limit', 'RATE_LIMIT_EXCEEDED', { 'retry-after': String(options.retryAfterSeconds ?? 7) }),
      no_credits: (_request, res) => exaError(res, 402, 'You have run out of credits. Top up at dashboard.exa.ai', 'NO_MORE_CREDITS'),
      server_error: (_request, res) => exaError(res, 500, 'Internal server error', 'INTERNAL_ERROR'),
      malformed: rawReply(200, '<html><body>Bad gateway</body></html>', 'text/html'),
      wrong_shape: (_request, res) => sendJson(res, 200, { requestId: requestId(), data: { results: [] } }),
      stall: stall(),
    },
    answer: (request, res) => {
      const path = pathOf(request);
      if (request.method === 'POST' && path === '/search') return searchReply(request.body, corpus, res);
      if (request.method === 'POST' && path === '/contents') return contentsReply(request.body, corpus, res);
      exaError(res, 404, 'Not found', 'NOT_FOUND');
    },
  });
}
