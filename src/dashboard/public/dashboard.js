// The dashboard page. Plain DOM, no framework and no build step. Everything that comes from the
// server or from search results goes in through textContent, never innerHTML.

const $ = (id) => document.getElementById(id);
const SVG_NS = 'http://www.w3.org/2000/svg';

// Held only in memory: a reload asks the server again, and new keys are never written to storage.
const state = { csrfToken: null, keyPendingDeletion: null };

class DashboardApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && state.csrfToken) headers['x-csrf-token'] = state.csrfToken;
  const response = await fetch(`/dashboard/api/${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (response.status === 204) return null;
  const json = await response.json().catch(() => null);
  if (!response.ok) throw new DashboardApiError(response.status, json?.message ?? `request failed (HTTP ${response.status})`);
  return json;
}

/** Runs a dashboard action; an expired session sends the user back to sign-in, other errors go to `errorElement`. */
async function attempt(errorElement, action) {
  errorElement.textContent = '';
  try {
    await action();
  } catch (error) {
    if (error instanceof DashboardApiError && error.status === 401) {
      showSignIn('Your session has ended. Please sign in again.');
      return;
    }
    errorElement.textContent = error.message;
  }
}

// ---- formatting ----

const formatUtc = (iso) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)}` : 'never');
const formatNumber = (value) => new Intl.NumberFormat('en').format(value);

function timeElement(iso) {
  const element = document.createElement('time');
  if (iso) element.dateTime = iso;
  element.textContent = formatUtc(iso);
  return element;
}

// ---- views ----

function showSignIn(message = '') {
  state.csrfToken = null;
  clearNewKey();
  $('playground-key').value = '';
  $('result-list').replaceChildren();
  $('search-results').hidden = true;
  $('loading').hidden = true;
  $('dashboard-view').hidden = true;
  $('account-bar').hidden = true;
  $('sign-in-view').hidden = false;
  $('sign-in-error').textContent = message;
  $('login').focus();
}

async function showDashboard(session) {
  state.csrfToken = session.csrfToken;
  $('account-name').textContent = session.account.email ? `${session.account.name} (${session.account.email})` : session.account.name;
  $('loading').hidden = true;
  $('sign-in-view').hidden = true;
  $('account-bar').hidden = false;
  $('dashboard-view').hidden = false;
  await Promise.all([attempt($('keys-error'), loadKeys), refreshUsage()]);
}

// ---- sign-in and sign-out ----

$('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const error = $('sign-in-error');
  error.textContent = '';
  if (!form.reportValidity()) return;
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  try {
    const session = await api('POST', 'session', { login: $('login').value, password: $('password').value });
    $('password').value = '';
    await showDashboard(session);
    $('key-name').focus();
  } catch (failure) {
    error.textContent = failure.message;
    $('password').select();
  } finally {
    button.disabled = false;
  }
});

$('sign-out').addEventListener('click', async () => {
  try {
    await api('DELETE', 'session');
  } finally {
    showSignIn();
  }
});

// ---- API keys ----

async function loadKeys() {
  const keys = await api('GET', 'keys');
  $('keys-body').replaceChildren(...keys.map(keyRow));
  $('no-keys').hidden = keys.length > 0;
  $('keys-body').closest('.table-wrap').hidden = keys.length === 0;
}

function keyRow(key) {
  const row = document.createElement('tr');
  const cell = (content, label) => {
    const td = document.createElement('td');
    td.dataset.label = label;
    td.append(content);
    row.append(td);
  };
  const prefix = document.createElement('code');
  prefix.textContent = `${key.prefix}_…`;
  cell(prefix, 'Prefix');
  cell(key.name, 'Name');
  cell(timeElement(key.createdAt), 'Created (UTC)');
  cell(timeElement(key.lastUsedAt), 'Last used (UTC)');
  const remove = document.createElement('button');
  remove.type = 'button';
  remove.className = 'button danger-outline small';
  remove.textContent = 'Delete';
  remove.setAttribute('aria-label', `Delete key ${key.name} (${key.prefix})`);
  remove.addEventListener('click', () => confirmDeletion(key, remove));
  cell(remove, '');
  return row;
}

$('create-key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  if (!form.reportValidity()) return;
  await attempt($('keys-error'), async () => {
    const created = await api('POST', 'keys', { name: $('key-name').value });
    form.reset();
    showNewKey(created);
    await loadKeys();
  });
});

function showNewKey(created) {
  $('new-key-name').textContent = created.name;
  $('new-key-value').value = created.key;
  $('copy-status').textContent = '';
  $('new-key-panel').hidden = false;
  $('new-key-panel').focus();
  // Ready for the playground; a reload or sign-out forgets it.
  $('playground-key').value = created.key;
}

function clearNewKey() {
  $('new-key-value').value = '';
  $('new-key-panel').hidden = true;
}

$('copy-key').addEventListener('click', async () => {
  const input = $('new-key-value');
  try {
    await navigator.clipboard.writeText(input.value);
    $('copy-status').textContent = 'Copied to the clipboard.';
  } catch {
    // No clipboard access (insecure origin, permission denied): leave the key selected for Ctrl+C.
    input.focus();
    input.select();
    $('copy-status').textContent = 'Copying is not allowed here: the key is selected, press Ctrl+C (⌘C) to copy it.';
  }
});

$('done-key').addEventListener('click', () => {
  clearNewKey();
  $('key-name').focus();
});

function confirmDeletion(key, trigger) {
  state.keyPendingDeletion = { key, trigger };
  $('delete-prefix').textContent = key.prefix;
  $('delete-name').textContent = key.name;
  $('delete-dialog').returnValue = '';
  $('delete-dialog').showModal();
}

$('delete-dialog').addEventListener('close', async () => {
  const pending = state.keyPendingDeletion;
  state.keyPendingDeletion = null;
  if (!pending) return;
  if ($('delete-dialog').returnValue !== 'confirm') {
    pending.trigger.focus();
    return;
  }
  await attempt($('keys-error'), async () => {
    await api('DELETE', `keys/${encodeURIComponent(pending.key.id)}`);
    await loadKeys();
  });
  $('key-name').focus();
});

// ---- usage ----

async function refreshUsage() {
  await attempt($('usage-error'), async () => renderUsage(await api('GET', 'usage')));
}

function renderUsage({ today, history }) {
  $('usage-used').textContent = formatNumber(today.used);
  $('usage-allowance').textContent = formatNumber(today.allowance);
  $('usage-remaining').textContent = formatNumber(today.remaining);
  const progress = $('usage-progress');
  progress.max = Math.max(1, today.allowance);
  progress.value = Math.min(today.used, progress.max);
  progress.textContent = `${today.used} of ${today.allowance}`;
  const reset = $('usage-reset');
  reset.dateTime = today.resetsAt;
  reset.textContent = `${formatUtc(today.resetsAt)} UTC`;
  $('usage-summary').textContent = usageSummaryText(history);
  $('usage-chart').replaceChildren(...usageChart(history));
}

function usageSummaryText(history) {
  const total = history.reduce((sum, day) => sum + day.used, 0);
  if (total === 0) return `No usage in the last ${history.length} days.`;
  const busiest = history.reduce((best, day) => (day.used > best.used ? day : best));
  const activeDays = history.filter((day) => day.used > 0).length;
  return `${formatNumber(total)} units over ${history.length} days, on ${activeDays} day${activeDays === 1 ? '' : 's'}; busiest ${busiest.day} with ${formatNumber(busiest.used)}.`;
}

function svg(name, attributes = {}, text) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [attribute, value] of Object.entries(attributes)) element.setAttribute(attribute, String(value));
  if (text !== undefined) element.textContent = text;
  return element;
}

function html(name, className, text) {
  const element = document.createElement(name);
  element.className = className;
  element.textContent = text;
  return element;
}

/**
 * One bar per day; each bar's <title> gives its day and count on hover, the chart's own title the
 * summary. The SVG stretches to the card's width, so its labels are HTML: stretched SVG text distorts.
 */
function usageChart(history) {
  const width = 600;
  const height = 120;
  const top = 4;
  const slot = width / history.length;
  const peak = Math.max(1, ...history.map((day) => day.used));
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-labelledby': 'usage-chart-title', class: 'usage-chart', preserveAspectRatio: 'none' });
  chart.append(svg('title', { id: 'usage-chart-title' }, `Daily usage, last ${history.length} days. ${usageSummaryText(history)}`));
  chart.append(svg('line', { x1: 0, x2: width, y1: top, y2: top, class: 'grid', 'vector-effect': 'non-scaling-stroke' }));
  chart.append(svg('line', { x1: 0, x2: width, y1: height - 0.5, y2: height - 0.5, class: 'axis', 'vector-effect': 'non-scaling-stroke' }));
  history.forEach((day, index) => {
    const barHeight = day.used === 0 ? 0 : Math.max(2, (day.used / peak) * (height - top - 1));
    const bar = svg('rect', {
      x: index * slot + slot * 0.15,
      y: height - 1 - barHeight,
      width: slot * 0.7,
      height: barHeight,
      class: index === history.length - 1 ? 'bar today' : 'bar',
    });
    bar.append(svg('title', {}, `${day.day}: ${formatNumber(day.used)}`));
    chart.append(bar);
  });
  const axis = html('div', 'chart-axis', '');
  axis.setAttribute('aria-hidden', 'true');
  axis.append(html('span', '', history[0]?.day ?? ''), html('span', '', 'today'));
  const peakLabel = html('div', 'chart-peak', `peak ${formatNumber(peak)}`);
  peakLabel.setAttribute('aria-hidden', 'true');
  return [peakLabel, chart, axis];
}

$('refresh-usage').addEventListener('click', refreshUsage);

// ---- playground ----

const isWebUrl = (url) => /^https?:\/\//i.test(url ?? '');

$('search-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  if (!form.reportValidity()) return;
  const button = form.querySelector('button[type="submit"]');
  const status = $('search-status');
  const list = $('result-list');
  $('search-results').hidden = false;
  list.replaceChildren();
  $('search-meta').textContent = '';
  status.className = '';
  status.textContent = 'Searching…';
  button.disabled = true;
  try {
    const response = await fetch('/v1/web-search', {
      method: 'POST',
      headers: { authorization: `Bearer ${$('playground-key').value.trim()}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        query: $('query').value,
        count: Number($('count').value || 10),
        freshness: $('freshness').value,
        summary: $('summary').checked,
      }),
    });
    const json = await response.json().catch(() => null);
    $('search-meta').textContent = responseMeta(response);
    if (!response.ok) {
      status.className = 'error';
      status.textContent = `Error ${response.status}: ${json?.message ?? response.statusText}`;
      return;
    }
    const results = json?.data?.webPages?.value ?? [];
    status.textContent = results.length ? `${results.length} result${results.length === 1 ? '' : 's'}.` : 'No results for this query.';
    list.replaceChildren(...results.map(resultItem));
  } catch (error) {
    status.className = 'error';
    status.textContent = `The request failed: ${error.message}`;
  } finally {
    button.disabled = false;
    await refreshUsage();
  }
});

function responseMeta(response) {
  const remaining = response.headers.get('x-ratelimit-remaining');
  const parts = [`HTTP ${response.status}`];
  if (remaining !== null) parts.push(`X-RateLimit-Remaining: ${remaining}`);
  const cache = response.headers.get('x-cache');
  if (cache) parts.push(`cache ${cache}`);
  return parts.join(' · ');
}

function resultItem(result) {
  const item = document.createElement('li');
  const title = document.createElement(isWebUrl(result.url) ? 'a' : 'span');
  title.className = 'result-title';
  title.textContent = result.name || result.url;
  // Result URLs come from the open web: only http(s) becomes a link, never javascript: or data:.
  if (title instanceof HTMLAnchorElement) {
    title.href = result.url;
    title.target = '_blank';
    title.rel = 'noopener noreferrer';
  }
  const url = document.createElement('p');
  url.className = 'result-url';
  url.textContent = result.displayUrl || result.url;
  item.append(title, url);
  const excerpt = (text) => (text.length > 600 ? `${text.slice(0, 600)}…` : text);
  const body = result.snippet ?? result.text;
  if (body) item.append(html('p', 'result-snippet', excerpt(body)));
  if (result.summary) {
    const summary = html('p', 'result-summary', '');
    summary.append(html('strong', '', 'Summary: '), excerpt(result.summary));
    item.append(summary);
  }
  return item;
}

// ---- start ----

try {
  await showDashboard(await api('GET', 'session'));
} catch (error) {
  showSignIn(error instanceof DashboardApiError && error.status === 401 ? '' : error.message);
}
