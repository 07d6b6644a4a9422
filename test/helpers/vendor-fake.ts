/**
 * The plumbing the vendor fakes share; what makes each fake faithful (its routes, key checks,
 * documented bodies and error envelopes) stays in the vendor's own file, with the docs it follows.
 *
 * A vendor fake is a loopback server that records every request and, in this order: turns away what
 * the vendor turns away before anything else (an unknown route, a missing or wrong key); answers the
 * faults queued with failNext(), one request each; answers the failure mode set with fail(), every
 * request until it is cleared; and otherwise answers as the vendor documents.
 */
import type { ServerResponse } from 'node:http';
import type { Fault } from './faults.js';
import { startUpstream, type RecordedRequest } from './gateway.js';

export const DAY_MS = 86_400_000;

export const hostOf = (url: string) => new URL(url).hostname;
/** Whether `url` is on `site` or one of its subdomains, as site: filters match. */
export const withinSite = (url: string, site: string) => hostOf(url) === site || hostOf(url).endsWith(`.${site}`);

/** The path of a recorded request. */
export const pathOf = (request: { url: string }) => new URL(request.url, 'http://fake').pathname;
/** The query parameters of a recorded request. */
export const paramsOf = (request: { url: string }) => new URL(request.url, 'http://fake').searchParams;
/** The query parameters of a recorded request, as an object. */
export const queryOf = (request: { url: string }) => Object.fromEntries(paramsOf(request));

interface VendorFakeSpec<Failure extends string> {
  /** The vendor's answer to a request it turns away before anything else; undefined lets the request in. */
  refuse(request: RecordedRequest): Fault | undefined;
  /** The vendor's documented failures, by name. */
  failures?: Record<Failure, Fault>;
  /** The vendor's normal answer. */
  answer: Fault;
}

export async function startVendorFake<Failure extends string = never>(spec: VendorFakeSpec<Failure>) {
  let failure: Failure | null = null;
  const queued: Fault[] = [];
  const upstream = await startUpstream((request, res, req) => {
    const refusal = spec.refuse(request);
    if (refusal) return refusal(request, res, req);
    const fault = queued.shift() ?? (failure === null ? undefined : spec.failures?.[failure]);
    return (fault ?? spec.answer)(request, res, req);
  });
  return {
    ...upstream,
    /** The query parameters of the n-th request. */
    params: (n: number) => paramsOf(upstream.requests[n]!),
    /** From now on every request let in gets this documented failure (null: answer normally). */
    fail(next: Failure | null) {
      failure = next;
    },
    /** Answers the next requests let in with these faults, in order, before normal replies resume. */
    failNext(...faults: Fault[]) {
      queued.push(...faults);
    },
  };
}

/** A rerank vendor's fake, as the rerank tests drive it. */
export interface RerankFake {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
  /** Answers the next requests with these faults, in order, before normal replies resume. */
  failNext(...faults: Fault[]): void;
}

/** A rerank vendor's fake: POSTs to other routes than `paths` get `notFound`; the rest as for any vendor fake. */
export function startRerankFake(spec: {
  paths: readonly string[];
  notFound: Fault;
  refuse(request: RecordedRequest): Fault | undefined;
  answer(request: RecordedRequest, res: ServerResponse): void;
}): Promise<RerankFake> {
  return startVendorFake({
    refuse: (request) => (request.method !== 'POST' || !spec.paths.includes(pathOf(request)) ? spec.notFound : spec.refuse(request)),
    answer: (request, res) => spec.answer(request, res),
  });
}
