/**
 * The account dashboard (spec §5): sign-in, API keys (shown in full once, at creation), the daily
 * allowance shared by all keys, and a playground for /v1/web-search. The page is three static files
 * served as they are; everything else is a small JSON API under /dashboard/api.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { ApiError, badRequest, retryAfterSeconds } from '../api/errors.js';
import { jsonBody } from '../server/middleware.js';
import type { Services } from '../server/services.js';
import { keyPrefix, requireActive } from '../state/accounts.js';
import type { Account, ApiKeyRecord, Session } from '../state/store.js';
import { DashboardSessions, requireCsrfToken, requireSameOrigin } from './session.js';

const WRONG_CREDENTIALS = 'wrong username/email or password';
/** Per login, whatever the outcome: enough for typos, far too few for guessing. */
const SIGN_IN_LIMITS = { perSecond: 0, perMinute: 10 };
const MAX_KEY_NAME_LENGTH = 64;

export function createDashboardRouter(services: Services): Router {
  const { accounts } = services;
  const sessions = new DashboardSessions(services);
  const router = new Router();
  const body = jsonBody('16kb');

  router.use(securityHeaders);
  router.get(['/dashboard', '/dashboard/'], serveAsset('index.html'));
  router.get('/dashboard/dashboard.css', serveAsset('dashboard.css'));
  router.get('/dashboard/dashboard.js', serveAsset('dashboard.js'));

  router.use('/dashboard/api', noStore, requireSameOrigin);

  router.post('/dashboard/api/session', ...body, async (ctx) => {
    const { login, password } = credentialsOf(ctx.request.body);
    await throttleSignIn(services, login);
    const account = await accounts.verifyLogin(login, password);
    if (!account) throw new ApiError(401, WRONG_CREDENTIALS);
    // Only after the password matched: a 403 for a wrong password would tell that the login exists.
    requireActive(account);
    ctx.body = sessionBody(account, await sessions.start(ctx, account));
  });

  router.get('/dashboard/api/session', async (ctx) => {
    const { account, session } = await sessions.require(ctx);
    ctx.body = sessionBody(account, session);
  });

  router.delete('/dashboard/api/session', async (ctx) => {
    // Signing out with an expired session just clears the cookie; a live one needs its CSRF token,
    // so that another site cannot sign the user out.
    const signedIn = await sessions.current(ctx);
    if (signedIn) requireCsrfToken(ctx, signedIn.session);
    await sessions.end(ctx);
    ctx.status = 204;
  });

  router.get('/dashboard/api/keys', async (ctx) => {
    const { account } = await sessions.require(ctx);
    ctx.body = (await accounts.store.listKeys({ accountId: account.id })).map(keyBody);
  });

  router.post('/dashboard/api/keys', ...body, async (ctx) => {
    const { account } = await sessions.requireForChange(ctx);
    const { key, record } = await accounts.createKey(account.id, keyNameOf(ctx.request.body));
    ctx.status = 201;
    ctx.body = { key, ...keyBody(record) };
  });

  router.delete('/dashboard/api/keys/:id', async (ctx) => {
    const { account } = await sessions.requireForChange(ctx);
    const deleted = await accounts.store.deleteKey(ctx.params.id!, services.now(), account.id);
    if (!deleted) throw new ApiError(404, `this account has no API key ${keyPrefix(ctx.params.id!)}`);
    ctx.status = 204;
  });

  router.get('/dashboard/api/usage', async (ctx) => {
    const { account } = await sessions.require(ctx);
    const { today, history } = await accounts.usageSummary(account);
    ctx.body = {
      today: { used: today.used, allowance: today.allowance, remaining: today.remaining, resetsAt: isoTime(today.resetsAt) },
      history,
    };
  });

  return router;
}

async function throttleSignIn(services: Services, login: string) {
  const { refusal } = await services.accounts.windows.hit(`login:${login.toLowerCase()}`, SIGN_IN_LIMITS, services.now());
  if (!refusal) return;
  const retrySeconds = retryAfterSeconds(refusal.retryAfterMs);
  throw new ApiError(429, `too many sign-in attempts for this login; retry in ${retrySeconds} s`, { 'Retry-After': String(retrySeconds) });
}

function credentialsOf(body: unknown): { login: string; password: string } {
  const { login, password } = (body ?? {}) as Record<string, unknown>;
  if (typeof login !== 'string' || !login.trim() || typeof password !== 'string' || !password) {
    throw badRequest('login and password are required');
  }
  return { login: login.trim(), password };
}

function keyNameOf(body: unknown): string {
  const { name } = (body ?? {}) as Record<string, unknown>;
  const trimmed = typeof name === 'string' ? name.trim() : '';
  if (!trimmed) throw badRequest('name is required: it tells your keys apart, e.g. "production" or "laptop"');
  if (trimmed.length > MAX_KEY_NAME_LENGTH) throw badRequest(`name must be at most ${MAX_KEY_NAME_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw badRequest('name must not contain control characters');
  return trimmed;
}

const isoTime = (ms: number) => new Date(ms).toISOString();

const sessionBody = (account: Account, session: Session) => ({
  account: { name: account.name, email: account.email },
  csrfToken: session.csrfToken,
});

const keyBody = (key: ApiKeyRecord) => ({
  id: key.id,
  prefix: keyPrefix(key.id),
  name: key.name,
  createdAt: isoTime(key.createdAt),
  lastUsedAt: key.lastUsedAt === null ? null : isoTime(key.lastUsedAt),
});

// ---- the page itself ----

/**
 * The page ships as source, with no build step: found from this module whether it runs compiled
 * (dist/src/dashboard/, .build/<dir>/src/dashboard/) or not, via the package root above it.
 */
const PUBLIC_DIRECTORY = join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'src', 'dashboard', 'public');

function packageRoot(start: string): string {
  for (let directory = start; ; directory = dirname(directory)) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    if (dirname(directory) === directory) throw new Error(`searchgate: no package.json above ${start}; cannot find the dashboard's files`);
  }
}

const CONTENT_TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

/** Read on every request: the files are small, and an edited page shows up without a restart. */
function serveAsset(file: string) {
  const type = CONTENT_TYPES[file.slice(file.lastIndexOf('.') + 1)]!;
  return async (ctx: Context) => {
    ctx.type = type;
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = await readFile(join(PUBLIC_DIRECTORY, file));
  };
}

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

async function securityHeaders(ctx: Context, next: Next) {
  ctx.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY',
  });
  await next();
}

async function noStore(ctx: Context, next: Next) {
  ctx.set('Cache-Control', 'no-store');
  await next();
}
