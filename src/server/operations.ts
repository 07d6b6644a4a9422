/**
 * The two operations once a request is valid and authenticated: allowance → cache → provider chain.
 * The HTTP routes and the MCP tools both run them, so that both charge, cache and answer alike.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../api/errors.js';
import type { RerankRequest, WebSearchRequest } from '../api/validate.js';
import { Deadline } from '../gateway/deadline.js';
import type { RerankOutcome } from '../gateway/rerank.js';
import type { SearchOutcome } from '../gateway/search.js';
import type { AllowanceGrant, Charge } from '../state/allowance.js';
import type { Principal } from '../state/keys.js';
import type { Services } from './services.js';

export interface OperationContext {
  principal: Principal;
  timeoutMs: number;
  /** Receives the X-RateLimit-* headers once the request is charged, so that a failure carries them too. */
  onCharged(headers: Record<string, string>): void;
}

export interface Answered<T> {
  outcome: T;
  /** HIT, MISS or BYPASS, as in X-Cache. */
  cacheStatus: string;
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

async function charged<T>(
  services: Services,
  charge: Charge,
  context: OperationContext,
  work: (deadline: Deadline) => Promise<{ value: T; status: string }>,
): Promise<Answered<T>> {
  const grant = await services.ledger.consume(context.principal, charge);
  if (grant) context.onCharged(grant.headers);
  const deadline = new Deadline(context.timeoutMs);
  const { value, status } = await refundOnServerFailure(grant, () => work(deadline)).finally(() => deadline.dispose());
  return { outcome: value, cacheStatus: status };
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

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64url');

function searchCacheKey(request: WebSearchRequest, services: Services): string {
  return sha256(
    JSON.stringify([
      services.config.version,
      request.query,
      request.count,
      request.freshness.raw,
      [...request.includeDomains].sort(),
      [...request.excludeDomains].sort(),
      request.text?.maxCharacters ?? null,
      request.summary,
      request.language,
    ]),
  );
}

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

function rerankCacheKey(request: RerankRequest, services: Services): string {
  const hash = createHash('sha256').update(services.config.version).update('\0').update(request.model).update('\0');
  hash.update(request.query);
  // Length-prefixed so that no two different document lists hash the same stream.
  for (const document of request.documents) hash.update(`\0${document.length}\0`).update(document);
  return hash.digest('base64url');
}
