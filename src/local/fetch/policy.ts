/** What one deployment lets its fetcher do: where it may connect, how much it may read, for how long. */
import type { LookupAddress } from 'node:dns';

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export interface FetchPolicy {
  /**
   * Lets fetches reach private, loopback, link-local and metadata addresses. Off by default: the
   * fetcher follows links strangers wrote. Tests turn it on to reach their own loopback servers.
   */
  allowPrivateNetworks: boolean;
  /** Host names that may resolve to private addresses even when allowPrivateNetworks is off (an intranet wiki). */
  allowPrivateHosts: readonly string[];
  maxRedirects: number;
  /** Most bytes read from the wire, before any Content-Encoding is undone. */
  maxBytes: number;
  /** Most bytes after decompression: what stops a decompression bomb. */
  maxDecodedBytes: number;
  /** For the whole fetch: DNS, every redirect hop and the body. */
  timeoutMs: number;
  userAgent: string;
  /** Name resolution; dns.lookup (the system resolver, /etc/hosts included) unless replaced. */
  resolve?: Resolver;
}

/** The product token robots.txt groups are matched against. */
export const ROBOTS_USER_AGENT = 'searchgate';

export const DEFAULT_USER_AGENT = `Mozilla/5.0 (compatible; ${ROBOTS_USER_AGENT}/0.1; self-hosted search index)`;

export const DEFAULT_FETCH_POLICY: FetchPolicy = Object.freeze({
  allowPrivateNetworks: false,
  allowPrivateHosts: [],
  maxRedirects: 5,
  maxBytes: 10 * 1024 * 1024,
  maxDecodedBytes: 20 * 1024 * 1024,
  timeoutMs: 20_000,
  userAgent: DEFAULT_USER_AGENT,
});

export function fetchPolicy(overrides: Partial<FetchPolicy> = {}): FetchPolicy {
  return { ...DEFAULT_FETCH_POLICY, ...overrides };
}
