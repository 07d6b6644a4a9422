/**
 * Where each vendor's clients put the key (../shared/spec/dialects.md R2): a Bearer header, the
 * vendor's own header, the query string, a JSON body field, a path segment. The first location
 * present wins. A key found anywhere is then checked by the same code as /v1's, so every dialect
 * shares one set of keys, accounts and allowances.
 *
 * A key that came in the body or the path is taken out of the request before anything else reads it
 * (the reader, the cache key, a log line); one in the query string is left out of what the reader
 * sees and is redacted wherever a URL is logged (R3).
 */
import { unauthorized } from '../api/errors.js';
import type { Authenticator, Principal } from '../state/keys.js';
import type { KeyLocation } from './types.js';

/** The key as it arrived: a whole Authorization header (checked as /v1 checks it), or a bare key. */
export type Credential = { from: 'authorization'; header: string } | { from: 'elsewhere'; key: string } | null;

/** What a request carries that can hold a key. */
export interface KeySources {
  header(name: string): string | undefined;
  query: Record<string, string | string[] | undefined>;
  /** The parsed body; a key field is deleted from it. */
  body: Record<string, unknown>;
  params: Record<string, string>;
}

const present = (value: unknown): value is string => typeof value === 'string' && value !== '';

/**
 * Takes the key from the first location that has one. Every body field and query parameter that can
 * hold a key is removed, whether or not it is the one used, so that none reaches the reader.
 */
export function takeKey(sources: KeySources, locations: readonly KeyLocation[]): Credential {
  let credential: Credential = null;
  for (const location of locations) {
    const found = lookUp(sources, location);
    if (credential === null && present(found)) {
      credential = location.in === 'bearer' ? { from: 'authorization', header: found } : { from: 'elsewhere', key: found };
    }
    if (location.in === 'body') delete sources.body[location.field];
    if (location.in === 'query') delete sources.query[location.name];
  }
  return credential;
}

function lookUp(sources: KeySources, location: KeyLocation): unknown {
  switch (location.in) {
    case 'bearer':
      return sources.header('authorization');
    case 'header':
      return sources.header(location.name);
    case 'query': {
      const value = sources.query[location.name];
      return Array.isArray(value) ? value[0] : value;
    }
    case 'body':
      return sources.body[location.field];
    case 'path':
      return sources.params[location.param];
  }
}

/**
 * The principal behind a credential, or 401: a missing key names where this dialect's clients put
 * one (`hint`); any other refusal is /v1's own (unknown, deleted, placeholder, whitespace).
 */
export function authenticateCredential(
  authenticator: Authenticator,
  credential: Credential,
  locations: readonly KeyLocation[],
  hint: string,
): Promise<Principal> {
  // Where the Bearer header is the only place, its absence is /v1's own 401.
  if (credential === null && locations.length === 1 && locations[0]!.in === 'bearer') return authenticator.authenticate(undefined);
  if (credential === null) return Promise.reject(unauthorized(`no API key: ${hint}`, 'missing_key'));
  return credential.from === 'authorization' ? authenticator.authenticate(credential.header) : authenticator.authenticateKey(credential.key);
}
