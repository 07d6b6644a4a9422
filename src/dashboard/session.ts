/**
 * Dashboard sessions: an opaque cookie token whose SHA-256 is all the store keeps (a leaked database
 * cannot be replayed as cookies), a per-session CSRF token the page echoes in X-CSRF-Token, and a
 * same-origin check on every state-changing request.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Next } from 'koa';
import { ApiError } from '../api/errors.js';
import type { Services } from '../server/services.js';
import { digestKey, requireActive } from '../state/accounts.js';
import type { Account, Session } from '../state/store.js';

const SESSION_COOKIE = 'searchgate_session';
/** The cookie is sent only to the dashboard: the /v1 API authenticates by Bearer key, never by cookie. */
const COOKIE_PATH = '/dashboard';

export interface SignedIn {
  account: Account;
  session: Session;
}

const randomToken = () => randomBytes(32).toString('base64url');
const digestOf = (token: string) => digestKey(token).toString('hex');

export class DashboardSessions {
  constructor(private readonly services: Services) {}

  /** Starts a session for `account`, replacing any session the browser already had (no fixation). */
  async start(ctx: Context, account: Account): Promise<Session> {
    await this.forgetStored(ctx);
    const { store } = this.services.accounts;
    const now = this.services.now();
    const lifetimeMs = this.services.config.dashboard.sessionHours * 3_600_000;
    const token = randomToken();
    const session: Session = { accountId: account.id, csrfToken: randomToken(), expiresAt: now + lifetimeMs };
    await store.createSession(digestOf(token), session, now);
    this.setCookie(ctx, token, Math.floor(lifetimeMs / 1000));
    return session;
  }

  /** The signed-in account, or undefined when there is no live session. */
  async current(ctx: Context): Promise<SignedIn | undefined> {
    const token = this.cookieToken(ctx);
    if (!token) return undefined;
    const { store } = this.services.accounts;
    const session = await store.findSession(digestOf(token), this.services.now());
    const account = session && (await store.findAccount(session.accountId));
    return account && session ? { account, session } : undefined;
  }

  /**
   * Like current(), but a missing session is a 401 and a disabled account a 403: an operator who
   * disables an account cuts off its open sessions at once, not when they expire.
   */
  async require(ctx: Context): Promise<SignedIn> {
    const signedIn = await this.current(ctx);
    if (!signedIn) throw new ApiError(401, 'not signed in, or the session has expired; sign in again');
    requireActive(signedIn.account);
    return signedIn;
  }

  /** require() for a request that changes something: it must also carry the session's CSRF token. */
  async requireForChange(ctx: Context): Promise<SignedIn> {
    const signedIn = await this.require(ctx);
    requireCsrfToken(ctx, signedIn.session);
    return signedIn;
  }

  async end(ctx: Context): Promise<void> {
    await this.forgetStored(ctx);
    this.setCookie(ctx, '', 0);
  }

  private async forgetStored(ctx: Context) {
    const token = this.cookieToken(ctx);
    if (token) await this.services.accounts.store.deleteSession(digestOf(token));
  }

  private cookieToken(ctx: Context): string | undefined {
    return ctx.cookies.get(SESSION_COOKIE) || undefined;
  }

  // Written by hand: Koa's cookie helper refuses a Secure cookie over plain HTTP, yet browsers accept
  // one from http://localhost, and behind a TLS-terminating proxy the request itself is plain HTTP.
  private setCookie(ctx: Context, value: string, maxAgeSeconds: number) {
    const attributes = [`${SESSION_COOKIE}=${value}`, `Path=${COOKIE_PATH}`, `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
    if (this.services.config.dashboard.secureCookies) attributes.push('Secure');
    ctx.append('Set-Cookie', attributes.join('; '));
  }
}

/** SameSite=Strict already keeps the cookie off cross-site requests; the token also covers same-site ones (sibling subdomains). */
export function requireCsrfToken(ctx: Context, session: Session) {
  const presented = Buffer.from(ctx.get('x-csrf-token'), 'utf8');
  const expected = Buffer.from(session.csrfToken, 'utf8');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
    throw new ApiError(403, 'missing or invalid CSRF token');
  }
}

/**
 * Browsers send Origin on every cross-origin POST/DELETE (and on same-origin ones too): a foreign one
 * is refused even for sign-in, which has no CSRF token yet (login CSRF). Clients without a browser
 * send no Origin and are not affected.
 *
 * Only the host (with port) is compared: behind a TLS-terminating proxy the request reaches us as
 * http while the browser's Origin says https. (Koa 3's ctx.origin is the Origin header itself, not
 * the request's own origin.)
 */
export async function requireSameOrigin(ctx: Context, next: Next) {
  const origin = ctx.get('origin');
  if ((ctx.method === 'POST' || ctx.method === 'DELETE') && origin && hostOf(origin) !== ctx.host) {
    throw new ApiError(403, 'cross-origin request refused: the Origin header does not match this dashboard');
  }
  await next();
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    // "null" (sandboxed frames, file: pages) and garbage match nothing.
    return undefined;
  }
}
