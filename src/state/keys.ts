/**
 * Key authentication (spec §5): account keys from the store, and the operator's keys from config.
 * Keys are held only as SHA-256 digests and compared in constant time; the presented key is never
 * logged. A key comes in a Bearer header on /v1, or wherever a vendor's clients put it on that
 * vendor's dialect (src/dialects/keys.ts); both end in the same checks.
 */
import { timingSafeEqual } from 'node:crypto';
import { unauthorized } from '../api/errors.js';
import { digestKey, keyPrefix, parseStoredKey, type AccountService } from './accounts.js';
import type { Account } from './store.js';

export interface Principal {
  /** Safe to log: a config key's name, or a stored key's visible prefix. */
  keyName: string;
  /** The account a stored key belongs to; operator keys from config have none and are unmetered. */
  account?: Account;
}

export interface Authenticator {
  /** The key of an `Authorization: Bearer <key>` header, with the header's own syntax checks. */
  authenticate(authorizationHeader: string | undefined): Promise<Principal>;
  /** A key that came in another place (a vendor's header, the query string, a body field, a path segment). */
  authenticateKey(key: string): Promise<Principal>;
}

const PLACEHOLDER = 'YOUR_API_KEY';

/**
 * The 401 cases of spec §5.6, each with its own message: missing header, wrong scheme, stray
 * whitespace, the unchanged placeholder, an unknown key. The scheme name is case-insensitive
 * (RFC 9110 §11.1); everything else is exact.
 */
function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '') {
    throw unauthorized('missing Authorization header; send "Authorization: Bearer <API_KEY>"', 'missing_key');
  }
  const scheme = /^\S+/.exec(header)?.[0] ?? '';
  if (scheme.toLowerCase() !== 'bearer') {
    throw unauthorized('the Authorization header must use the Bearer scheme: "Authorization: Bearer <API_KEY>"');
  }
  const match = /^[Bb][Ee][Aa][Rr][Ee][Rr] (\S+)$/.exec(header);
  if (!match) {
    throw unauthorized('malformed Authorization header: expected exactly one space after "Bearer" and no whitespace in the key');
  }
  return refusePlaceholder(match[1]!);
}

function refusePlaceholder(key: string): string {
  if (key === PLACEHOLDER || key === `<${PLACEHOLDER}>`) {
    throw unauthorized('the API key is still the placeholder YOUR_API_KEY; replace it with your key');
  }
  return key;
}

/** A key from anywhere but the Authorization header: only the checks that do not concern that header's syntax. */
function bareKey(key: string): string {
  if (/\s/.test(key)) throw unauthorized('the API key contains whitespace; send it exactly as it was created');
  return refusePlaceholder(key);
}

export class StaticKeyAuthenticator {
  /** Digested once, at start. */
  private readonly keys: Array<{ name: string; digest: Buffer }>;

  constructor(keys: ReadonlyArray<{ name: string; key: string }>) {
    this.keys = keys.map(({ name, key }) => ({ name, digest: digestKey(key) }));
  }

  authenticate(token: string): Principal {
    const digest = digestKey(token);
    // Compare against every key so that the time taken says nothing about which one matched.
    let found: string | undefined;
    for (const key of this.keys) if (timingSafeEqual(key.digest, digest)) found ??= key.name;
    if (found === undefined) throw unauthorized('invalid API key');
    return { keyName: found };
  }
}

/** Stored keys go to the account store; anything else is compared with the operator's keys. */
export class GatewayAuthenticator implements Authenticator {
  constructor(
    private readonly operatorKeys: StaticKeyAuthenticator,
    private readonly accounts: AccountService,
  ) {}

  authenticate(header: string | undefined): Promise<Principal> {
    return this.principalOf(bearerToken(header));
  }

  authenticateKey(key: string): Promise<Principal> {
    return this.principalOf(bareKey(key));
  }

  private async principalOf(token: string): Promise<Principal> {
    const id = parseStoredKey(token);
    if (id === undefined) return this.operatorKeys.authenticate(token);
    const { account, key } = await this.accounts.authenticate(id, token);
    return { keyName: keyPrefix(key.id), account };
  }
}
