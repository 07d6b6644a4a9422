/**
 * The operations once a request is valid and authenticated: allowance → cache → provider chain.
 * The HTTP routes (the /v1 API and every vendor dialect) and the MCP tools all run them, so that all
 * charge, cache and answer alike.
 */
import { createHash, hash } from 'node:crypto';
import { ApiError } from '../api/errors.js';
import type { RerankRequest, WebSearchRequest } from '../api/validate.js';
import type { ContentOutcome, ContentRequest, PageResult } from '../gateway/content.js';
import { Deadline } from '../gateway/deadline.js';
import { dedupeKey } from '../gateway/fusion.js';
import { truncateCodePoints } from '../gateway/text.js';
import type { RerankOutcome } from '../gateway/rerank.js';
import type { SearchOutcome } from '../gateway/search.js';
import type { AllowanceGrant, Charge } from '../state/allowance.js';
import type { Principal } from '../state/keys.js';
import type { RateWindowState } from '../state/store.js';
import type { Services } from './services.js';

export interface OperationContext {
  principal: Principal;
  timeoutMs: number;
  /**
   * Receives the X-RateLimit-* headers once the request is charged, so that a failure carries them
   * too, and the short-term window the account is in (for vendors whose headers report it: Brave).
   */
  onCharged(headers: Record<string, string>, windows: RateWindowState): void;
}

export interface Answered<T> {
  outcome: T;
  /** HIT, MISS, COALESCED or BYPASS, as in X-Cache. */
  cacheStatus: string;
  /** Allowance units this request was charged: 0 for operator keys (vendors' billing counters report it). */
  units: number;
}

export function webSearchOperation(services: Services, request: WebSearchRequest, context: OperationContext): Promise<Answered<SearchOutcome>> {
  return charged(services, 'web-search', context, (deadline) =>
    services.searchCache.getOrLoad(
      () => searchCacheKey(request, services),
      searchTtlMs(request, services),
      () => services.search.search(request, deadline),
    ),
  );
}

export function rerankOperation(services: Services, request: RerankRequest, context: OperationContext): Promise<Answered<RerankOutcome>> {
  return charged(services, 'rerank', context, (deadline) =>
    services.rerankCache.getOrLoad(
      () => rerankCacheKey(request, services),
      services.config.cache.ttlSeconds.rerank * 1000,
      () => services.rerank.rerank(request, deadline),
    ),
  );
}

/**
 * Charged once per request however many URLs it names; each page is cached on its own (by URL and
 * cap), so a page asked for again costs no fetch. A page that could not be had is not cached.
 */
export function contentOperation(services: Services, request: ContentRequest, context: OperationContext): Promise<Answered<ContentOutcome>> {
  const ttlMs = services.config.cache.ttlSeconds.content * 1000;
  return charged(services, 'content', context, async (deadline) => {
    const budgetMs = Math.min(request.timeBudgetMs ?? Infinity, services.config.content.timeBudgetMs, Math.max(0, deadline.remainingMs() - 50));
    const statuses: string[] = [];
    const load = async (url: string, signal: AbortSignal): Promise<PageResult> => {
      try {
        const { value, status } = await services.contentCache.getOrLoad(
          () => contentCacheKey(url, request.maxCharacters, services),
          ttlMs,
          async () => {
            const result = await services.content.fetchPage(url, request.maxCharacters, signal);
            if (!('page' in result)) throw new PageMissing(result);
            // Plain text only (the dialects' R7): a page's markdown, when a provider kept one, is not cached here.
            const { title, datePublished } = result.page;
            return { ...result, page: { text: truncateCodePoints(result.page.text, request.maxCharacters), title, datePublished } };
          },
        );
        statuses.push(status);
        return { ...value, url };
      } catch (error) {
        if (!(error instanceof PageMissing)) throw error;
        statuses.push('MISS');
        return { ...error.result, url };
      }
    };
    const unique = [...new Set(request.urls)];
    const loaded = await services.content.pages(unique, budgetMs, deadline.signal, load);
    const byUrl = new Map(loaded.map((page, i) => [unique[i]!, page]));
    const pages = request.urls.map((url) => byUrl.get(url)!);
    const providers = [...new Set(pages.flatMap((page) => ('provider' in page ? [page.provider] : [])))];
    return { value: { provider: providers.join('+') || 'none', pages }, status: combinedCacheStatus(statuses) };
  });
}

/** A page the chain has no text for: thrown out of a cache load, so that it is not cached. */
class PageMissing extends Error {
  constructor(readonly result: PageResult) {
    super('no text for this page');
  }
}

/** One status for a request of several pages: HIT when every page came from the cache. */
function combinedCacheStatus(statuses: readonly string[]): string {
  if (statuses.length > 0 && statuses.every((status) => status === 'BYPASS')) return 'BYPASS';
  return statuses.length > 0 && statuses.every((status) => status === 'HIT' || status === 'COALESCED') ? 'HIT' : 'MISS';
}

async function charged<T>(
  services: Services,
  charge: Charge,
  context: OperationContext,
  work: (deadline: Deadline) => Promise<{ value: T; status: string }>,
): Promise<Answered<T>> {
  const grant = await services.ledger.consume(context.principal, charge);
  if (grant) context.onCharged(grant.headers, grant.windows);
  const deadline = new Deadline(context.timeoutMs);
  try {
    const { value, status } = await refundOnServerFailure(grant, () => work(deadline));
    return { outcome: value, cacheStatus: status, units: grant?.units ?? 0 };
  } finally {
    deadline.dispose();
  }
}

/** A request that fails on our side or upstream (5xx) gives its charge back: the client got nothing for it. */
async function refundOnServerFailure<T>(grant: AllowanceGrant | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (grant && !(error instanceof ApiError && error.status < 500)) await grant.refund();
    throw error;
  }
}

/** One-shot: crypto.hash costs a fraction of a createHash object for a short text (same digest). */
const sha256 = (text: string) => hash('sha256', text, 'base64url');

function searchCacheKey(request: WebSearchRequest, services: Services): string {
  return sha256(
    JSON.stringify([
      services.config.version,
      request.query,
      request.count,
      request.offset,
      request.freshness.raw,
      sorted(request.includeDomains),
      sorted(request.excludeDomains),
      request.text?.maxCharacters ?? null,
      request.text?.format ?? 'text',
      request.summary,
      request.language,
    ]),
  );
}

/** A sorted copy of a list; a list of none or one is its own (it is only serialized). */
const sorted = (list: readonly string[]) => (list.length < 2 ? list : [...list].sort());

const DAY_MS = 86_400_000;

/** Fresher filters go stale sooner; a date range wholly in the past barely changes. */
function searchTtlMs(request: WebSearchRequest, services: Services): number {
  const ttl = services.config.cache.ttlSeconds;
  const freshness = request.freshness;
  const seconds =
    freshness.kind === 'none'
      ? ttl.noLimit
      : freshness.kind === 'preset'
        ? ttl[freshness.preset]
        : freshness.toMs <= services.now() - DAY_MS
          ? ttl.pastDates
          : ttl.recentDates;
  return seconds * 1000;
}

/** Keyed on the model the name resolves to, so that an alias and the id it stands for share entries. */
function rerankCacheKey(request: RerankRequest, services: Services): string {
  const { id, name } = services.rerank.resolveModel(request.model);
  const hash = createHash('sha256').update(services.config.version).update('\0').update(id).update('\0').update(name).update('\0');
  hash.update(request.query);
  // Length-prefixed so that no two different document lists hash the same stream.
  for (const document of request.documents) hash.update(`\0${document.length}\0`).update(document);
  return hash.digest('base64url');
}

/** A page by the address it names (fragment, tracking parameters and www. aside) and its cap. */
const contentCacheKey = (url: string, maxCharacters: number, services: Services) =>
  sha256(JSON.stringify([services.config.version, dedupeKey(url), maxCharacters]));
