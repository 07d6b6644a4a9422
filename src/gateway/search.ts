/**
 * Web search over a provider chain, as a fallback (the first provider that answers) or a fusion
 * (all at once, merged). Whatever a provider cannot do natively the gateway does here: over-fetch
 * and filter by domain and date, page through the upstream to honour count (and offset, for the
 * dialects that ask for a later page), fetch page text through the content chain, and cut text to
 * max_characters code points.
 */
import { ApiError } from '../api/errors.js';
import { freshnessWindow, type DateWindow } from '../api/freshness.js';
import type { WebSearchRequest } from '../api/validate.js';
import type { Logger } from '../server/logger.js';
import type { ProviderSearchResult, SearchProvider } from '../providers/types.js';
import type { ContentFiller } from './content.js';
import { Deadline } from './deadline.js';
import { toIsoUtc } from '../util/dates.js';
import { isWithinSite } from '../util/domains.js';
import { displayUrl, hostOf, leadingSentences, truncateCodePoints } from './text.js';
import { dedupeKey, reciprocalRankFusion } from './fusion.js';
import { chainFailure, type ChainFailure, type UpstreamCaller } from './upstream.js';

/** A result in its final shape, but for its position-dependent id. */
export interface GatewayResult {
  name: string;
  url: string;
  displayUrl: string;
  snippet?: string;
  text?: string;
  summary?: string;
  datePublished?: string;
  dateLastCrawled?: string;
}

export interface SearchOutcome {
  provider: string;
  results: GatewayResult[];
  /** Each result's rerank score, when the gateway reranked the list; null when it kept the provider's order. */
  scores: number[] | null;
  totalEstimatedMatches: number | null;
  someResultsRemoved: boolean;
}

/** Results in their final order, with the rerank scores that put them there (null when not reranked). */
interface Ranked {
  results: ProviderSearchResult[];
  scores: number[] | null;
}

interface Totals {
  totalEstimatedMatches: number | null;
  someResultsRemoved: boolean;
}

interface Collected extends Totals {
  results: ProviderSearchResult[];
}

export interface SearchTuning {
  mode: 'fallback' | 'fusion';
  fusion: { timeoutMs: number; k: number; weights: Readonly<Record<string, number>>; rerank: boolean };
  overFetchFactor: number;
  maxPagesPerRequest: number;
  rerank: { model: string | null; providers: readonly string[]; candidates: number; timeBudgetMs: number };
}

/** Scores documents against a query with a rerank model; see RerankGateway.score. */
export type SearchReranker = (model: string, query: string, documents: readonly string[], deadline: Deadline) => Promise<{ scores: number[] }>;

const HTTP_URL = /^https?:\/\/[^\s/]/i;
const SUMMARY_CODE_POINTS = 1000;
const SNIPPET_FROM_TEXT_CODE_POINTS = 300;

/** One provider's own calibrated scores, when it gave one for every result (see ProviderSearchResult.relevance). */
function providerRelevance(results: readonly ProviderSearchResult[]): number[] | null {
  if (results.length === 0 || !results.every((result) => typeof result.relevance === 'number')) return null;
  return results.map((result) => result.relevance!);
}

export class SearchGateway {
  constructor(
    readonly chain: readonly SearchProvider[],
    private readonly content: ContentFiller,
    private readonly tuning: SearchTuning,
    private readonly upstream: UpstreamCaller,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    private readonly reranker: SearchReranker | null = null,
  ) {}

  search(request: WebSearchRequest, deadline: Deadline): Promise<SearchOutcome> {
    // A dialect may ask for no results (Tavily's max_results 0): nothing to ask any upstream.
    if (request.count === 0) return Promise.resolve({ provider: 'none', results: [], scores: null, totalEstimatedMatches: null, someResultsRemoved: false });
    if (this.tuning.mode === 'fusion') return this.fuse(request, deadline);
    return this.upstream.firstThatAnswers(this.chain, 'search', deadline, (provider) => this.searchWith(provider, request, deadline));
  }

  private async searchWith(provider: SearchProvider, request: WebSearchRequest, deadline: Deadline): Promise<SearchOutcome> {
    const reranking = this.canRerank && this.tuning.rerank.providers.includes(provider.name);
    const collected = await this.collect(provider, request, this.goal(request, reranking), deadline);
    // A provider that scored its results with a calibrated model (the local index's hybrid ranking)
    // is not reranked again: its order and scores stand, and no page passes through a model.
    const scored = providerRelevance(collected.results);
    const ranked = scored ? { results: collected.results, scores: scored } : await this.ranked(collected.results, request, reranking, deadline);
    return this.finish(provider.name, ranked, collected, request, deadline);
  }

  private get canRerank(): boolean {
    return this.reranker !== null && this.tuning.rerank.model !== null;
  }

  /**
   * How many results to gather: every one up to the end of the page asked for and, when they will be
   * reranked, enough candidates for the model to choose from.
   */
  private goal(request: WebSearchRequest, reranking: boolean): number {
    const end = request.offset + request.count;
    return reranking ? Math.max(end, this.tuning.rerank.candidates) : end;
  }

  private async ranked(results: ProviderSearchResult[], request: WebSearchRequest, reranking: boolean, deadline: Deadline): Promise<Ranked> {
    if (!reranking || results.length === 0) return { results, scores: null };
    return this.rerankCandidates(request.query, results.slice(0, this.goal(request, true)), deadline);
  }

  /**
   * Fan-out: every available provider of the chain at once, within search.fusion.timeoutMs; the lists
   * that came back are merged by reciprocal rank fusion, deduplicated by page, optionally reranked as
   * one list, then cut to count. Providers that fail or are too slow are left out of the answer; only
   * when none answers does the request fail, with the status their failures call for.
   */
  private async fuse(request: WebSearchRequest, deadline: Deadline): Promise<SearchOutcome> {
    const fusion = this.tuning.fusion;
    if (this.chain.length === 0) throw new ApiError(503, 'no search provider is configured');
    const rerankUnion = fusion.rerank && this.canRerank;
    const goal = this.goal(request, rerankUnion);
    const fanOut = new Deadline(Math.min(fusion.timeoutMs, deadline.remainingMs()));
    const failures: ChainFailure[] = [];
    let answers: Array<{ provider: string; collected: Collected }>;
    try {
      // Chain order, not arrival order, so that ties and the merged records do not depend on timing.
      const turns = await Promise.all(
        this.chain.map(async (provider) => {
          const answer = await this.upstream.turn(provider.name, 'search', fanOut, failures, () => this.collect(provider, request, goal, fanOut));
          return answer && { provider: provider.name, collected: answer.value };
        }),
      );
      answers = turns.filter((answer): answer is { provider: string; collected: Collected } => answer !== undefined);
      if (answers.length === 0) throw chainFailure('search', failures, fanOut);
    } finally {
      fanOut.dispose();
    }
    const fused = reciprocalRankFusion(
      answers.map(({ provider, collected }) => ({ provider, results: collected.results, weight: fusion.weights[provider] ?? 1 })),
      fusion.k,
    ).map(({ result }) => result);
    const ranked = await this.ranked(fused, request, rerankUnion, deadline);
    const totals = answers.map(({ collected }) => collected.totalEstimatedMatches).filter((total): total is number => total !== null);
    return this.finish(
      answers.map(({ provider }) => provider).join('+'),
      ranked,
      {
        totalEstimatedMatches: totals.length ? Math.max(...totals) : null,
        someResultsRemoved: answers.some(({ collected }) => collected.someResultsRemoved),
      },
      request,
      deadline,
    );
  }

  /**
   * Up to `goal` results from one provider that pass the request's filters: over-fetching when the
   * gateway filters itself, and paging through the upstream while it can give more.
   */
  private async collect(provider: SearchProvider, request: WebSearchRequest, goal: number, deadline: Deadline): Promise<Collected> {
    const capabilities = provider.capabilities;
    const nowMs = this.now();
    const window = freshnessWindow(request.freshness, nowMs);
    const nativeDates =
      capabilities.freshness === 'all' || (capabilities.freshness === 'presets' && request.freshness.kind !== 'dates');
    const gatewayFilters =
      (window !== null && !nativeDates) ||
      (request.includeDomains.length > 0 && !capabilities.includeDomains) ||
      (request.excludeDomains.length > 0 && !capabilities.excludeDomains);
    const wanted = gatewayFilters ? Math.ceil(goal * this.tuning.overFetchFactor) : goal;
    const pageSize = Math.min(capabilities.maxPageSize, wanted);

    const filtering = window !== null || request.includeDomains.length > 0 || request.excludeDomains.length > 0;
    const kept: ProviderSearchResult[] = [];
    const seenPages = new Set<string>();
    let someResultsRemoved = false;
    let totalEstimatedMatches: number | null = null;
    let offset = 0;
    for (let page = 0; page < this.tuning.maxPagesPerRequest; page++) {
      const reply = await this.upstream.withRetries(provider.name, 'search', deadline, () =>
        provider.search({
          query: request.query,
          count: pageSize,
          offset,
          page,
          freshness: request.freshness,
          includeDomains: capabilities.includeDomains ? request.includeDomains : [],
          excludeDomains: capabilities.excludeDomains ? request.excludeDomains : [],
          text: request.text && capabilities.text ? request.text : null,
          summary: request.summary,
          language: request.language,
          nowMs,
          signal: deadline.signal,
        }),
      );
      if (page === 0) totalEstimatedMatches = reply.totalEstimatedMatches ?? null;
      if (reply.someResultsRemoved) someResultsRemoved = true;
      for (const result of reply.results) {
        // A result must point somewhere a client can go; anything else is upstream noise.
        if (!HTTP_URL.test(result.url)) continue;
        const pageKey = dedupeKey(result.url);
        if (seenPages.has(pageKey)) continue;
        seenPages.add(pageKey);
        if (filtering && !this.passesFilters(result, request, window, nativeDates)) {
          someResultsRemoved = true;
          continue;
        }
        kept.push(result);
      }
      offset += reply.results.length;
      const exhausted = reply.hasMore === undefined ? reply.results.length < pageSize : !reply.hasMore || reply.results.length === 0;
      if (kept.length >= goal || exhausted || !capabilities.pagination) break;
    }
    return { results: kept, totalEstimatedMatches, someResultsRemoved };
  }

  /** The page asked for ([offset, offset + count)), page text where text mode needs it, and the final result shape. */
  private async finish(
    provider: string,
    ranked: Ranked,
    totals: Totals,
    request: WebSearchRequest,
    deadline: Deadline,
  ): Promise<SearchOutcome> {
    const end = request.offset + request.count;
    const chosen = ranked.results.slice(request.offset, end);
    if (request.text || request.summary) {
      const maxCharacters = request.text?.maxCharacters ?? SUMMARY_CODE_POINTS;
      await this.content.fill(chosen, maxCharacters, deadline, request.text?.format === 'markdown');
    }
    return {
      provider,
      results: chosen.map((result) => shapeResult(result, request)),
      scores: ranked.scores?.slice(request.offset, end) ?? null,
      totalEstimatedMatches: totals.totalEstimatedMatches,
      someResultsRemoved: totals.someResultsRemoved,
    };
  }

  /**
   * Orders candidates by the rerank model, on title and snippet (short, so scoring 20 of them costs a
   * fraction of a second on a CPU). Reranking improves a search but is not needed for one: if it
   * fails or overruns its budget, the provider's order stands and the request still succeeds.
   */
  private async rerankCandidates(query: string, candidates: ProviderSearchResult[], deadline: Deadline): Promise<Ranked> {
    const { model, timeBudgetMs } = this.tuning.rerank;
    const budget = new Deadline(Math.min(timeBudgetMs, deadline.remainingMs()));
    try {
      const documents = candidates.map((result) =>
        [result.title, result.snippet ?? (result.text ? leadingSentences(result.text, SNIPPET_FROM_TEXT_CODE_POINTS) : '')]
          .filter(Boolean)
          .join('\n'),
      );
      const { scores } = await this.reranker!(model!, query, documents, budget);
      const order = candidates
        .map((result, rank) => ({ result, rank, score: scores[rank]! }))
        .sort((a, b) => b.score - a.score || a.rank - b.rank);
      return { results: order.map(({ result }) => result), scores: order.map(({ score }) => score) };
    } catch (error) {
      this.logger.warn('search results kept in provider order: reranking failed', { reason: (error as Error).message });
      return { results: candidates, scores: null };
    } finally {
      budget.dispose();
    }
  }

  /**
   * Filters are checked here even when the upstream claims to apply them natively: upstreams have
   * been known to ignore them silently. A result without a date fails a date filter the gateway
   * applies itself, since nothing shows it belongs in the window; under a native filter it is kept,
   * since the upstream judged it on metadata we were not shown.
   */
  private passesFilters(result: ProviderSearchResult, request: WebSearchRequest, window: DateWindow | null, nativeDates: boolean) {
    const host = hostOf(result.url);
    if (host === null) return false;
    if (request.includeDomains.length > 0 && !request.includeDomains.some((domain) => isWithinSite(host, domain))) return false;
    if (request.excludeDomains.some((domain) => isWithinSite(host, domain))) return false;
    if (window) {
      const published = toIsoUtc(result.datePublished);
      if (published === null) return nativeDates;
      const ms = Date.parse(published);
      if (ms < window.fromMs || ms >= window.toMs) return false;
    }
    return true;
  }
}

function shapeResult(result: ProviderSearchResult, request: WebSearchRequest): GatewayResult {
  const shaped: GatewayResult = {
    name: result.title?.trim() || displayUrl(result.url),
    url: result.url,
    displayUrl: displayUrl(result.url),
  };
  if (request.text) {
    const text = (request.text.format === 'markdown' && result.markdown) || result.text;
    if (text) shaped.text = truncateCodePoints(text, request.text.maxCharacters);
    // Kept for the dialects that show a snippet beside the text (Tavily's content, Exa's highlights); /v1 drops it.
    if (result.snippet) shaped.snippet = result.snippet;
  } else {
    const snippet = result.snippet ?? (result.text ? leadingSentences(result.text, SNIPPET_FROM_TEXT_CODE_POINTS) : null);
    shaped.snippet = snippet ?? '';
  }
  if (request.summary) {
    const summary = result.summary ?? (result.text ? leadingSentences(result.text, SUMMARY_CODE_POINTS) : null) ?? result.snippet;
    if (summary) shaped.summary = summary;
  }
  const datePublished = toIsoUtc(result.datePublished);
  if (datePublished) shaped.datePublished = datePublished;
  const dateLastCrawled = toIsoUtc(result.dateLastCrawled);
  if (dateLastCrawled) shaped.dateLastCrawled = dateLastCrawled;
  return shaped;
}
