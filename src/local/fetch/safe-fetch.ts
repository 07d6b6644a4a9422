/**
 * The one way the local index fetches from the web: http(s) only, every address checked after DNS
 * resolution and on every redirect hop, the connection pinned to the checked address (a second DNS
 * answer cannot swap in 127.0.0.1), body size capped before and after decompression, and one time
 * limit over the whole fetch.
 */
import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { signalWithTimeout } from '../../util/timeout.js';
import { isMetadataHostname, isNonPublicAddress } from './address.js';
import { parseContentEncoding, readCappedBody } from './body.js';
import { FetchError } from './errors.js';
import type { FetchPolicy } from './policy.js';

export interface FetchedResource {
  /** The URL the body came from, after redirects. */
  url: string;
  status: number;
  /** The Content-Type header as sent (charset parameter included), or null. */
  contentType: string | null;
  /** Decompressed body. */
  body: Buffer;
  /** The URLs that answered with a redirect, in order: the requested URL first. Empty when none. */
  redirects: string[];
  /** Response headers of the final hop, lower-case names, repeated headers joined with ", ". */
  headers: Record<string, string>;
}

export interface FetchOptions {
  accept?: string;
  /** Asked before each redirect is followed; false stops the fetch with a "redirect_refused" FetchError. */
  followRedirect?: (to: string, from: string) => boolean | Promise<boolean>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const DEFAULT_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,application/pdf;q=0.8,*/*;q=0.5';

export async function safeFetch(url: string, policy: FetchPolicy, signal: AbortSignal, options: FetchOptions = {}): Promise<FetchedResource> {
  const deadline = signalWithTimeout(signal, policy.timeoutMs, `no complete reply within ${policy.timeoutMs} ms`);
  const redirects: string[] = [];
  let current = url;
  try {
    let target = parseHttpUrl(url, url);
    for (;;) {
      current = target.href;
      const hop = await fetchOnce(target, policy, deadline.signal, options.accept ?? DEFAULT_ACCEPT);
      if ('resource' in hop) return { ...hop.resource, redirects };
      redirects.push(target.href);
      if (redirects.length > policy.maxRedirects) {
        throw new FetchError('too_many_redirects', `more than ${policy.maxRedirects} redirects`, url);
      }
      const next = parseHttpUrl(hop.location, target.href, target);
      if (options.followRedirect && !(await options.followRedirect(next.href, target.href))) {
        throw new FetchError('redirect_refused', `redirect to ${next.href} not followed`, target.href);
      }
      target = next;
    }
  } catch (error) {
    throw asFetchError(error, current, signal, deadline.signal, policy.timeoutMs);
  } finally {
    deadline.dispose();
  }
}

type Hop = { resource: Omit<FetchedResource, 'redirects'> } | { location: string };

async function fetchOnce(url: URL, policy: FetchPolicy, signal: AbortSignal, accept: string): Promise<Hop> {
  const addresses = await permittedAddresses(url, policy, signal);
  // One dispatcher per hop, so its connections can only ever go to the addresses just checked.
  const dispatcher = new Agent({ connect: addresses ? { lookup: pinnedLookup(addresses) } : {} });
  try {
    const response = await request(url, {
      dispatcher,
      method: 'GET',
      headers: { 'user-agent': policy.userAgent, accept, 'accept-encoding': 'gzip, deflate, br' },
      signal,
    });
    const headers = flattenHeaders(response.headers);
    const location = headers.location;
    if (REDIRECT_STATUSES.has(response.statusCode) && location) {
      discard(response.body);
      return { location };
    }
    const declaredLength = Number(headers['content-length']);
    if (Number.isFinite(declaredLength) && declaredLength > policy.maxBytes) {
      discard(response.body);
      throw new FetchError('too_large', `reply of ${declaredLength} bytes is larger than ${policy.maxBytes} bytes`, url.href);
    }
    const body = await readCappedBody(response.body, parseContentEncoding(headers['content-encoding']), policy, url.href, signal);
    return {
      resource: { url: url.href, status: response.statusCode, contentType: headers['content-type'] ?? null, body, headers },
    };
  } finally {
    dispatcher.destroy().catch(() => {});
  }
}

/**
 * The addresses this URL may be fetched from, or null when its host is an IP literal (nothing to
 * pin). Throws "refused" when the policy forbids any of them: refusing when only one of several
 * answers is private keeps an attacker's DNS from mixing in an internal address.
 */
async function permittedAddresses(url: URL, policy: FetchPolicy, signal: AbortSignal): Promise<LookupAddress[] | null> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const bareName = hostname.replace(/\.$/, '');
  const exempt = policy.allowPrivateNetworks || policy.allowPrivateHosts.some((allowed) => allowed.toLowerCase().replace(/\.$/, '') === bareName);
  if (!exempt && isMetadataHostname(hostname)) {
    throw new FetchError('refused', `${hostname} is a cloud metadata service`, url.href);
  }
  if (isIP(hostname)) {
    if (!exempt && isNonPublicAddress(hostname)) {
      throw new FetchError('refused', `${hostname} is a private, loopback or link-local address`, url.href);
    }
    return null;
  }
  const resolve = policy.resolve ?? ((name: string) => lookup(name, { all: true }));
  let addresses: LookupAddress[];
  try {
    addresses = await untilAborted(resolve(hostname), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    throw new FetchError('network', `cannot resolve ${hostname} (${(error as { code?: string }).code ?? 'lookup failed'})`, url.href);
  }
  if (addresses.length === 0) throw new FetchError('network', `${hostname} has no address`, url.href);
  const forbidden = exempt ? undefined : addresses.find((answer) => isNonPublicAddress(answer.address));
  if (forbidden) {
    throw new FetchError('refused', `${hostname} resolves to ${forbidden.address}, a private, loopback or link-local address`, url.href);
  }
  return addresses;
}

/** A net.connect lookup that answers with the checked addresses whatever the name. */
function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    // With autoSelectFamily (Node's default) net.connect asks for all addresses.
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

function parseHttpUrl(location: string, reportedUrl: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(location, base);
  } catch {
    throw new FetchError('invalid_url', `not a URL: ${location}`, reportedUrl);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchError('invalid_url', `only http and https URLs are fetched, not ${url.protocol}`, reportedUrl);
  }
  url.hash = '';
  return url;
}

/** Drops a body we will not read; destroying it emits an abort error that nobody needs to hear. */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function asFetchError(error: unknown, url: string, callerSignal: AbortSignal, deadline: AbortSignal, timeoutMs: number): FetchError {
  if (error instanceof FetchError) return error;
  if (callerSignal.aborted) return new FetchError('aborted', 'fetch aborted', url);
  if (deadline.aborted) return new FetchError('timeout', `no complete reply within ${timeoutMs} ms`, url);
  const code = (error as { code?: string })?.code ?? (error as { cause?: { code?: string } })?.cause?.code;
  return new FetchError('network', code ? `connection failed (${code})` : `connection failed (${(error as Error)?.message ?? error})`, url);
}
