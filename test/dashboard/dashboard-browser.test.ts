/**
 * The dashboard in a real headless Chromium: the page, its CSP, cookies and the JSON API together,
 * driven through labels and roles the way a keyboard or screen-reader user reaches them.
 */
import { mkdirSync } from 'node:fs';
import test from 'ava';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { hashPassword } from '../../src/state/accounts.js';
import { utcDay } from '../../src/state/store.js';
import { expectErrorResponse } from '../helpers/faults.js';
import { searchEnvelope, sendJson, startGateway, startUpstream, upstreamConfig, type RunningGateway } from '../helpers/gateway.js';

const PASSWORD = 'correct horse battery staple';
const RESULTS = [
  {
    url: 'https://www.rfc-editor.org/rfc/rfc9110',
    name: 'RFC 9110: HTTP Semantics',
    snippet: 'The Hypertext Transfer Protocol (HTTP) is a stateless application-level protocol for distributed, collaborative, hypertext information systems.',
  },
  {
    url: 'https://developer.mozilla.org/en-US/docs/Web/HTTP/Headers/Content-Security-Policy',
    name: 'Content-Security-Policy - HTTP | MDN',
    snippet: 'The HTTP Content-Security-Policy response header allows website administrators to control resources the user agent is allowed to load for a given page.',
  },
];

let browser: Browser;
let gateway: RunningGateway;
let closeUpstream: () => Promise<void>;
/** localhost, not 127.0.0.1: the origin Chromium trusts with a Secure cookie over plain HTTP. */
let dashboardUrl: string;

test.before(async () => {
  const upstream = await startUpstream((_request, res) => sendJson(res, 200, searchEnvelope(RESULTS)));
  closeUpstream = upstream.close;
  gateway = await startGateway(upstreamConfig(upstream.url));
  const { store } = gateway.gateway.services.accounts;
  const account = await store.createAccount(
    { name: 'alice', email: 'alice@example.org', passwordHash: await hashPassword(PASSWORD), ratePerSecond: 0, ratePerMinute: 0 },
    Date.now(),
  );
  // A few earlier days of use, so that the chart has something to draw.
  for (const [daysAgo, units] of [[1, 120], [2, 310], [3, 45], [6, 220], [9, 80], [12, 400], [15, 150], [20, 60], [27, 90]] as const) {
    await store.chargeDaily(account.id, utcDay(Date.now() - daysAgo * 86_400_000), units, 1000);
  }
  dashboardUrl = `${gateway.url.replace('127.0.0.1', 'localhost')}/dashboard`;
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
    timeout: 30_000,
  });
  mkdirSync('test-results', { recursive: true });
});

test.after.always(async () => {
  await browser?.close();
  await gateway?.close();
  await closeUpstream?.();
});

const search = (key: string) => gateway.post('/v1/web-search', { query: 'http semantics' }, { authorization: `Bearer ${key}` });

/** Failures the page itself reports: script errors and CSP violations (the CSP forbids inline code). */
function watchForPageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) problems.push(`console: ${message.text()}`);
  });
  return problems;
}

const isFocused = (locator: Locator) => locator.evaluate((element) => element === element.ownerDocument.activeElement);

async function signIn(page: Page) {
  await page.goto(dashboardUrl);
  await page.getByLabel('Username or email').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password', { exact: true }).press('Enter');
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
}

test.serial('sign in, create a key shown once, use it in the playground and from Node, then delete it', async (t) => {
  t.timeout(120_000);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.teardown(() => context.close());
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(dashboardUrl).origin });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems = watchForPageProblems(page);

  await page.goto(dashboardUrl);
  await page.getByLabel('Username or email').fill('alice');
  await page.getByLabel('Password', { exact: true }).fill('wrong password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await t.notThrowsAsync(page.getByRole('alert').filter({ hasText: 'wrong username/email or password' }).waitFor());

  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByLabel('Password', { exact: true }).press('Enter');
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  t.true(await page.getByText('alice (alice@example.org)').isVisible());
  const cookies = await context.cookies();
  t.like(cookies.find((cookie) => cookie.name === 'searchgate_session'), { httpOnly: true, secure: true, sameSite: 'Strict', path: '/dashboard' });
  t.is(await page.evaluate('document.cookie'), '', 'the session cookie is out of reach of scripts');

  // Create a key: it is shown once, in full.
  await page.getByLabel('Key name').fill('laptop');
  await page.getByLabel('Key name').press('Enter');
  const newKey = page.getByLabel('New API key');
  await newKey.waitFor();
  const key = await newKey.inputValue();
  t.regex(key, /^sg_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  t.true(await page.getByText('Copy it now, it will not be shown again.').isVisible());
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText(/Copied to the clipboard|the key is selected/).waitFor();
  t.is(await page.evaluate('navigator.clipboard.readText()'), key);

  const prefix = key.slice(0, 'sg_'.length + 12);
  const keyRow = page.getByRole('row').filter({ hasText: 'laptop' });
  t.true((await keyRow.textContent())!.includes(prefix));
  t.false((await keyRow.textContent())!.includes(key), 'the table shows the prefix only');

  await page.getByRole('button', { name: 'Done' }).click();
  t.false(await newKey.isVisible());
  t.true(await isFocused(page.getByLabel('Key name')), 'focus returns to the form');
  t.false((await page.content()).includes(key), 'the key is gone from the page after Done');

  // Playground: the new key is filled in, results are shown with the remaining allowance.
  t.is(await page.getByLabel('API key', { exact: true }).inputValue(), key);
  const remainingBefore = Number((await page.locator('#usage-remaining').textContent())!.replace(/,/g, ''));
  await page.getByLabel('Query').fill('http semantics');
  await page.getByLabel('Number of results').fill('5');
  await page.getByLabel('Freshness').selectOption('oneWeek');
  await page.getByLabel('Include summaries').check();
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('2 results.').waitFor();
  t.is(await page.getByRole('link', { name: 'RFC 9110: HTTP Semantics' }).getAttribute('href'), 'https://www.rfc-editor.org/rfc/rfc9110');
  await page.getByText(`X-RateLimit-Remaining: ${remainingBefore - 1}`).waitFor();
  await page.locator('#usage-remaining').filter({ hasText: new Intl.NumberFormat('en').format(remainingBefore - 1) }).waitFor();
  t.is(await page.locator('svg.usage-chart rect.bar').count(), 30);
  t.regex((await page.locator('#usage-chart-title').textContent())!, /Daily usage, last 30 days\. 1,476 units over 30 days, on 10 days; busiest .* with 400\./);

  // Away from the buttons, so that the screenshot shows no hover state.
  await page.mouse.move(0, 0);
  await page.screenshot({ path: 'test-results/dashboard-desktop.png', fullPage: true });

  // A reload keeps the session but not the key: it was shown once.
  await page.reload();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  t.false(await newKey.isVisible());
  t.false((await page.content()).includes(key));
  t.is(await page.getByLabel('API key', { exact: true }).inputValue(), '');
  t.is(await page.evaluate('localStorage.length + sessionStorage.length'), 0, 'nothing is kept in web storage');

  t.is((await search(key)).status, 200, 'the key works from a server, too');

  // Delete through the dialog, by keyboard: Escape cancels, Tab reaches the confirm button.
  const deleteButton = page.getByRole('button', { name: `Delete key laptop (${prefix})` });
  await deleteButton.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog', { name: 'Delete API key?' });
  await dialog.waitFor();
  t.true(await isFocused(dialog.getByRole('button', { name: 'Cancel' })), 'Cancel is focused first');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  t.true(await isFocused(deleteButton), 'focus returns to the Delete button');
  t.is((await search(key)).status, 200, 'cancelled: the key still works');

  await page.keyboard.press('Enter');
  await dialog.waitFor();
  t.true((await dialog.textContent())!.includes(prefix));
  await page.keyboard.press('Tab');
  t.true(await isFocused(dialog.getByRole('button', { name: 'Delete key' })));
  await page.keyboard.press('Enter');
  await page.getByText('No API keys yet.').waitFor();

  t.regex((await expectErrorResponse(t, gateway, await search(key), 401)).message, /deleted/);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.falsy((await context.cookies()).find((cookie) => cookie.name === 'searchgate_session'));
  t.deepEqual(problems, []);
});

test.serial('on a phone-sized screen the page fits without sideways scrolling', async (t) => {
  t.timeout(120_000);
  const context = await browser.newContext({ viewport: { width: 375, height: 740 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const problems = watchForPageProblems(page);
  const fitsWidth = () => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth');

  await page.goto(dashboardUrl);
  await page.getByLabel('Username or email').waitFor();
  t.true(await fitsWidth(), 'sign-in form');

  await signIn(page);
  for (const name of ['phone', 'a key with a rather long descriptive name for the CI pipeline']) {
    await page.getByLabel('Key name').fill(name);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('New API key').waitFor();
  }
  await page.getByLabel('Query').fill('http semantics');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('2 results.').waitFor();
  t.true(await fitsWidth(), 'dashboard with the new-key panel, the key table and results');

  await page.mouse.move(0, 0);
  await page.screenshot({ path: 'test-results/dashboard-phone.png', fullPage: true });
  t.deepEqual(problems, []);
});

test.serial('the playground shows a result whose URL is not http(s) as text, never as a link', async (t) => {
  t.timeout(60_000);
  const context = await browser.newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  // The gateway drops such results itself; the page must not rely on that.
  await page.route('**/v1/web-search', (route) =>
    route.fulfill({ json: searchEnvelope([{ url: 'javascript:alert(1)', name: 'Not a link', snippet: 'A result whose URL is not http(s).' }]) }),
  );
  await signIn(page);
  await page.getByLabel('API key', { exact: true }).fill('sg_000000000000_unused');
  await page.getByLabel('Query').fill('anything');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('1 result.').waitFor();
  t.true(await page.getByText('Not a link').isVisible());
  t.is(await page.getByRole('link', { name: 'Not a link' }).count(), 0);
});
