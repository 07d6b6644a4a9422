import { createHash } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import Database from 'better-sqlite3';
import { hashPassword } from '../../src/state/accounts.js';
import { expectErrorResponse } from '../helpers/faults.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig, type RunningGateway } from '../helpers/gateway.js';

const PASSWORD = 'correct horse battery staple';

async function setup(t: ExecutionContext, options: { now?: () => number } = {}) {
  const upstream = await startUpstream((_request, res) =>
    sendJson(res, 200, searchEnvelope([{ url: 'https://example.org/', name: 'Example', snippet: 'An example page.' }])),
  );
  const gateway = await startGateway(upstreamConfig(upstream.url), options);
  t.teardown(async () => {
    await gateway.close();
    await upstream.close();
  });
  // Rate windows off: these tests make several calls within one second.
  const account = await gateway.gateway.services.accounts.store.createAccount(
    { name: 'alice', email: 'alice@example.org', passwordHash: await hashPassword(PASSWORD), ratePerSecond: 0, ratePerMinute: 0 },
    Date.now(),
  );
  return { gateway, upstream, account };
}

interface Browser {
  cookie: string;
  csrfToken: string;
}

async function signIn(gateway: RunningGateway, login = 'alice', password = PASSWORD, headers: Record<string, string> = {}) {
  return fetch(`${gateway.url}/dashboard/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ login, password }),
  });
}

async function signedIn(t: ExecutionContext, gateway: RunningGateway): Promise<Browser> {
  const response = await signIn(gateway);
  t.is(response.status, 200);
  const cookie = response.headers.getSetCookie()[0]!.split(';')[0]!;
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  return { cookie, csrfToken };
}

function dashboardApi(gateway: RunningGateway, browser: Browser) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${gateway.url}/dashboard/api/${path}`, {
      method,
      headers: {
        cookie: browser.cookie,
        'x-csrf-token': browser.csrfToken,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

const search = (gateway: RunningGateway, key: string) => gateway.post('/v1/web-search', { query: 'example' }, { authorization: `Bearer ${key}` });

test('a wrong password and an unknown login get the same 401', async (t) => {
  const { gateway } = await setup(t);
  const wrongPassword = await signIn(gateway, 'alice', 'not the password');
  const unknownLogin = await signIn(gateway, 'mallory', PASSWORD);
  const wrongPasswordBody = await expectErrorResponse(t, gateway, wrongPassword, 401);
  const unknownLoginBody = await expectErrorResponse(t, gateway, unknownLogin, 401);
  t.is(wrongPasswordBody.message, 'wrong username/email or password');
  t.is(unknownLoginBody.message, wrongPasswordBody.message);
  t.deepEqual(wrongPassword.headers.getSetCookie(), []);
});

test('sign-in by name or email sets a HttpOnly, SameSite=Strict, Secure cookie whose token the store keeps only as a digest', async (t) => {
  const { gateway } = await setup(t);
  const response = await signIn(gateway, 'ALICE@example.org');
  t.is(response.status, 200);
  const body = (await response.json()) as any;
  t.deepEqual(body.account, { name: 'alice', email: 'alice@example.org' });
  t.regex(body.csrfToken, /^[A-Za-z0-9_-]{43}$/);
  t.is(response.headers.get('cache-control'), 'no-store');

  const [setCookie] = response.headers.getSetCookie();
  const attributes = setCookie!.split(/;\s*/);
  const token = attributes[0]!.replace('searchgate_session=', '');
  t.regex(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  for (const attribute of ['HttpOnly', 'SameSite=Strict', 'Secure', 'Path=/dashboard']) t.true(attributes.includes(attribute), attribute);

  const database = new Database(gateway.config.accounts.embedded.path, { readonly: true });
  t.teardown(() => database.close());
  const rows = database.prepare('SELECT * FROM sessions').all() as Array<Record<string, unknown>>;
  t.is(rows.length, 1);
  const stored = JSON.stringify(rows);
  t.false(stored.includes(token), 'the token itself is not stored');
  t.is(rows[0]!.token_digest, createHash('sha256').update(token).digest('hex'));

  const session = await fetch(`${gateway.url}/dashboard/api/session`, { headers: { cookie: attributes[0]! } });
  t.is(session.status, 200);
  t.is(((await session.json()) as any).csrfToken, body.csrfToken);
});

test('secureCookies: false drops only the Secure attribute', async (t) => {
  const gateway = await startGateway({ dashboard: { secureCookies: false } });
  t.teardown(() => gateway.close());
  await gateway.gateway.services.accounts.store.createAccount({ name: 'bob', passwordHash: await hashPassword(PASSWORD) }, Date.now());
  const attributes = (await signIn(gateway, 'bob')).headers.getSetCookie()[0]!.split(/;\s*/);
  t.false(attributes.includes('Secure'));
  t.true(attributes.includes('HttpOnly') && attributes.includes('SameSite=Strict'));
});

test('creating a key needs the CSRF token and a same-origin Origin', async (t) => {
  const { gateway } = await setup(t);
  const browser = await signedIn(t, gateway);
  const api = dashboardApi(gateway, browser);

  const withoutToken = await api('POST', 'keys', { name: 'ci' }, { 'x-csrf-token': '' });
  t.is((await expectErrorResponse(t, gateway, withoutToken, 403)).message, 'missing or invalid CSRF token');
  const wrongToken = await api('POST', 'keys', { name: 'ci' }, { 'x-csrf-token': 'A'.repeat(43) });
  t.is(wrongToken.status, 403);

  const foreign = await api('POST', 'keys', { name: 'ci' }, { origin: 'https://evil.example' });
  t.regex((await expectErrorResponse(t, gateway, foreign, 403)).message, /cross-origin/);
  t.is((await api('POST', 'keys', { name: 'ci' }, { origin: 'null' })).status, 403, 'an opaque origin is foreign too');
  t.is((await signIn(gateway, 'alice', PASSWORD, { origin: 'https://evil.example' })).status, 403, 'sign-in too');

  t.is((await api('POST', 'keys', { name: 'ci' }, { origin: gateway.url })).status, 201, 'its own origin is fine');
  t.is(((await (await api('GET', 'keys')).json()) as unknown[]).length, 1, 'only the accepted request created a key');
});

test('a created key works at once, is listed by prefix only, and is refused once deleted', async (t) => {
  const { gateway } = await setup(t);
  const api = dashboardApi(gateway, await signedIn(t, gateway));

  const created = await api('POST', 'keys', { name: '  production  ' });
  t.is(created.status, 201);
  t.is(created.headers.get('cache-control'), 'no-store');
  const { key, id, prefix, name, createdAt } = (await created.json()) as any;
  t.regex(key, /^sg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  t.is(prefix, `sg_${id}`);
  t.true(key.startsWith(`${prefix}_`));
  t.is(name, 'production');
  t.notThrows(() => new Date(createdAt).toISOString());

  const response = await search(gateway, key);
  t.is(response.status, 200);
  for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) t.truthy(response.headers.get(header), header);
  t.is(response.headers.get('x-ratelimit-remaining'), '999');

  const listed = await api('GET', 'keys');
  const listedText = await listed.text();
  t.false(listedText.includes(key.slice(prefix.length + 1)), 'the secret part is never listed');
  const keys = JSON.parse(listedText);
  t.is(keys.length, 1);
  t.like(keys[0], { id, prefix, name: 'production', createdAt });
  t.true('lastUsedAt' in keys[0]);

  const deleted = await api('DELETE', `keys/${id}`);
  t.is(deleted.status, 204);
  t.regex((await expectErrorResponse(t, gateway, await search(gateway, key), 401)).message, /deleted/);
  t.deepEqual(await (await api('GET', 'keys')).json(), []);
  t.is((await api('DELETE', `keys/${id}`)).status, 404, 'already deleted');
});

test("an account cannot delete another account's key", async (t) => {
  const { gateway } = await setup(t);
  const { accounts } = gateway.gateway.services;
  const bob = await accounts.store.createAccount({ name: 'bob', passwordHash: await hashPassword(PASSWORD) }, Date.now());
  const { record, key } = await accounts.createKey(bob.id, 'bobs');
  const api = dashboardApi(gateway, await signedIn(t, gateway));
  t.is((await api('DELETE', `keys/${record.id}`)).status, 404);
  t.is((await search(gateway, key)).status, 200);
});

test('key names are required and bounded', async (t) => {
  const { gateway } = await setup(t);
  const api = dashboardApi(gateway, await signedIn(t, gateway));
  t.is((await api('POST', 'keys', { name: '   ' })).status, 400);
  t.is((await api('POST', 'keys', {})).status, 400);
  t.is((await api('POST', 'keys', { name: 'x'.repeat(65) })).status, 400);
  t.is((await api('POST', 'keys', { name: 'a\nb' })).status, 400);
});

test('usage shows the call made with a key, for today and the last 30 days', async (t) => {
  const now = Date.parse('2025-03-10T15:00:00Z');
  const { gateway } = await setup(t, { now: () => now });
  const api = dashboardApi(gateway, await signedIn(t, gateway));
  const { key } = (await (await api('POST', 'keys', { name: 'usage' })).json()) as any;

  const before = (await (await api('GET', 'usage')).json()) as any;
  t.deepEqual(before.today, { used: 0, allowance: 1000, remaining: 1000, resetsAt: '2025-03-11T00:00:00.000Z' });
  t.is((await search(gateway, key)).status, 200);
  const after = (await (await api('GET', 'usage')).json()) as any;
  t.like(after.today, { used: 1, remaining: 999 });
  t.is(after.history.length, 30);
  t.deepEqual(after.history.at(-1), { day: '2025-03-10', used: 1 });
  t.deepEqual(after.history[0], { day: '2025-02-09', used: 0 });
});

test('signing out ends the session on the server, not just in the browser', async (t) => {
  const { gateway } = await setup(t);
  const browser = await signedIn(t, gateway);
  const api = dashboardApi(gateway, browser);
  t.is((await api('DELETE', 'session', undefined, { 'x-csrf-token': '' })).status, 403, 'sign-out needs the CSRF token too');

  const signOut = await api('DELETE', 'session');
  t.is(signOut.status, 204);
  t.regex(signOut.headers.getSetCookie()[0]!, /^searchgate_session=;.*Max-Age=0/);
  // The old cookie, replayed, is worthless.
  t.is((await api('GET', 'session')).status, 401);
  t.is((await api('GET', 'keys')).status, 401);
  t.is((await api('POST', 'keys', { name: 'late' })).status, 401);
  t.is((await api('DELETE', 'session')).status, 204, 'signing out twice is harmless');
});

test('sign-in attempts are throttled per login', async (t) => {
  const { gateway } = await setup(t, { now: () => Date.parse('2025-03-10T15:00:10Z') });
  for (let attempt = 0; attempt < 10; attempt++) t.is((await signIn(gateway, 'alice', `guess ${attempt}`)).status, 401);
  const throttled = await signIn(gateway, 'Alice', PASSWORD);
  t.is(throttled.headers.get('retry-after'), '50');
  t.regex((await expectErrorResponse(t, gateway, throttled, 429)).message, /too many sign-in attempts/);
  t.is((await signIn(gateway, 'alice@example.org', PASSWORD)).status, 200, 'the throttle is per login string');
});

test('a disabled account cannot sign in, and its open sessions stop working', async (t) => {
  const { gateway, account } = await setup(t);
  const api = dashboardApi(gateway, await signedIn(t, gateway));
  await gateway.gateway.services.accounts.store.updateAccount(account.id, { status: 'disabled' });
  t.regex((await expectErrorResponse(t, gateway, await signIn(gateway), 403)).message, /disabled/);
  t.is((await signIn(gateway, 'alice', 'wrong password')).status, 401, 'a wrong password still says nothing more');
  t.is((await api('GET', 'keys')).status, 403);
});

test('the page and its assets are served with their types and a strict CSP', async (t) => {
  const { gateway } = await setup(t);
  const expectations: Array<[string, RegExp]> = [
    ['/dashboard', /^text\/html/],
    ['/dashboard/', /^text\/html/],
    ['/dashboard/dashboard.css', /^text\/css/],
    ['/dashboard/dashboard.js', /^text\/javascript/],
  ];
  for (const [path, type] of expectations) {
    const response = await fetch(`${gateway.url}${path}`);
    t.is(response.status, 200, path);
    t.regex(response.headers.get('content-type') ?? '', type, path);
    const csp = response.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'self'", "frame-ancestors 'none'", "connect-src 'self'"]) t.true(csp.includes(directive), `${path}: ${directive}`);
    t.is(response.headers.get('x-content-type-options'), 'nosniff');
    t.is(response.headers.get('referrer-policy'), 'no-referrer');
    t.true((await response.text()).length > 100);
  }
  const page = await (await fetch(`${gateway.url}/dashboard`)).text();
  t.notRegex(page, /<script>|<style|\sstyle=|\son[a-z]+=/i, 'no inline script or style: the CSP would block it');
  await expectErrorResponse(t, gateway, await fetch(`${gateway.url}/dashboard/nope.js`), 404);
});

test('the dashboard is not mounted when disabled', async (t) => {
  const gateway = await startGateway({ dashboard: { enabled: false } });
  t.teardown(() => gateway.close());
  t.is((await fetch(`${gateway.url}/dashboard`)).status, 404);
  t.is((await signIn(gateway)).status, 404);
});
