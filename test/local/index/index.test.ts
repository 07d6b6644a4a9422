/** The local index on disk: writes, search with filters, ranking, snippets, reopening. */
import { execFileSync } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import { Field, Schema, Utf8 } from 'apache-arrow';
import test from 'ava';
import { openLocalIndex } from '../../../src/local/index/index.js';
import { PAGES_TABLE, SCHEMA_VERSION_KEY, pageSchema, toRow } from '../../../src/local/index/schema.js';
import type { IndexedPage, LocalIndex } from '../../../src/local/types.js';
import { filler, page, query, temporaryDirectory } from './helpers.js';

async function openWith(t: Parameters<typeof temporaryDirectory>[0], pages: IndexedPage[]) {
  const directory = await temporaryDirectory(t);
  const index = await openLocalIndex(directory);
  t.teardown(() => index.close());
  await index.upsert(pages);
  return { index, directory };
}

async function urlsFound(index: LocalIndex, ...args: Parameters<typeof query>): Promise<string[]> {
  const { hits } = await index.search(query(...args));
  return hits.map((hit) => hit.page.url).sort();
}

const DOMAIN_PAGES = [
  page('https://example.com/a', { text: 'walrus facts' }),
  page('https://docs.example.com/b', { text: 'walrus habitat' }),
  page('https://a.b.example.com/c', { text: 'walrus diet' }),
  page('https://badexample.com/d', { text: 'walrus myths' }),
  page('https://example.org/e', { text: 'walrus pictures' }),
];

test('an empty index answers searches, gets and stats', async (t) => {
  const { index } = await openWith(t, []);
  t.deepEqual(await index.search(query('anything')), { hits: [], total: 0 });
  t.is(await index.get('https://nowhere.example/'), null);
  const stats = await index.stats();
  t.is(stats.documents, 0);
  t.is(stats.domains, 0);
  t.is(stats.lastUpdated, null);
});

test('upserted pages are found, with their stored text and a score', async (t) => {
  const text = 'The narwhal is a medium-sized toothed whale with a large tusk.';
  const { index } = await openWith(t, [page('https://sea.example/narwhal', { title: 'Narwhal', text })]);
  const { hits, total } = await index.search(query('narwhal tusk'));
  t.is(hits.length, 1);
  t.is(total, 1);
  t.is(hits[0]!.page.text, text, 'text mode returns the stored main text');
  t.deepEqual(hits[0]!.page, page('https://sea.example/narwhal', { title: 'Narwhal', text }));
  t.true(hits[0]!.score > 0);
});

test('a domain filter matches the domain and its subdomains, not look-alikes', async (t) => {
  const { index } = await openWith(t, DOMAIN_PAGES);
  t.deepEqual(await urlsFound(index, 'walrus', { includeDomains: ['example.com'] }), [
    'https://a.b.example.com/c',
    'https://docs.example.com/b',
    'https://example.com/a',
  ]);
  t.deepEqual(await urlsFound(index, 'walrus', { includeDomains: ['docs.example.com', 'example.org'] }), [
    'https://docs.example.com/b',
    'https://example.org/e',
  ]);
});

test('excludeDomains removes the domain and its subdomains', async (t) => {
  const { index } = await openWith(t, DOMAIN_PAGES);
  t.deepEqual(await urlsFound(index, 'walrus', { excludeDomains: ['example.com'] }), [
    'https://badexample.com/d',
    'https://example.org/e',
  ]);
});

test('include and exclude together: a subdomain can be carved out of an included domain', async (t) => {
  const { index } = await openWith(t, DOMAIN_PAGES);
  t.deepEqual(
    await urlsFound(index, 'walrus', { includeDomains: ['example.com'], excludeDomains: ['docs.example.com'] }),
    ['https://a.b.example.com/c', 'https://example.com/a'],
  );
});

test('filters run inside the query: the top hits of the filtered set come back, not survivors of a global top-k', async (t) => {
  const crowd = Array.from({ length: 60 }, (_, n) =>
    page(`https://crowd.example/${n}`, { title: 'albatross albatross', text: 'albatross albatross albatross' }),
  );
  const { index } = await openWith(t, [...crowd, page('https://lonely.example/x', { text: `albatross ${filler(300)}` })]);
  const { hits } = await index.search(query('albatross', { limit: 5, includeDomains: ['lonely.example'] }));
  t.deepEqual(
    hits.map((hit) => hit.page.url),
    ['https://lonely.example/x'],
  );
});

test('the date window is half-open in UTC, to the millisecond, and pages without a date never match', async (t) => {
  const day = (iso: string) => page(`https://days.example/${iso}`, { datePublished: iso, text: 'puffin sighting' });
  const { index } = await openWith(t, [
    day('2023-12-31T23:59:59.999Z'),
    day('2024-01-01T00:00:00.000Z'),
    day('2024-01-01T23:59:59.999Z'),
    day('2024-01-02T00:00:00.000Z'),
    page('https://days.example/undated', { text: 'puffin sighting' }),
  ]);
  const window = { fromMs: Date.UTC(2024, 0, 1), toMs: Date.UTC(2024, 0, 2) };
  t.deepEqual(await urlsFound(index, 'puffin', { window }), [
    'https://days.example/2024-01-01T00:00:00.000Z',
    'https://days.example/2024-01-01T23:59:59.999Z',
  ]);
  t.deepEqual(await urlsFound(index, 'puffin', { window, excludeDomains: ['days.example'] }), []);
  t.is((await index.search(query('puffin'))).hits.length, 5, 'no window: undated pages match');
});

test('a window that does not start or end at midnight (a rolling preset) is exact to the millisecond too', async (t) => {
  const at = (iso: string) => page(`https://rolling.example/${iso}`, { datePublished: iso, text: 'heron nest' });
  const { index } = await openWith(t, [
    at('2023-12-31T12:00:00.000Z'),
    at('2024-01-01T11:59:59.999Z'),
    at('2024-01-01T12:00:00.000Z'),
    at('2024-01-02T08:00:00.000Z'),
    at('2024-06-30T23:59:59.999Z'),
    at('2025-02-03T05:59:59.999Z'),
    at('2025-02-03T06:00:00.000Z'),
  ]);
  const window = { fromMs: Date.parse('2024-01-01T12:00:00.000Z'), toMs: Date.parse('2025-02-03T06:00:00.000Z') };
  t.deepEqual(await urlsFound(index, 'heron', { window, limit: 20 }), [
    'https://rolling.example/2024-01-01T12:00:00.000Z',
    'https://rolling.example/2024-01-02T08:00:00.000Z',
    'https://rolling.example/2024-06-30T23:59:59.999Z',
    'https://rolling.example/2025-02-03T05:59:59.999Z',
  ]);
});

/** Instants at and around the boundaries a window is split at: days, months, years, to the millisecond. */
const BOUNDARY_INSTANTS = [
  '2023-12-31T23:59:59.999Z',
  '2024-01-01T00:00:00.000Z',
  '2024-01-14T23:59:59.999Z',
  '2024-01-15T00:00:00.000Z',
  '2024-01-15T11:59:59.999Z',
  '2024-01-15T12:00:00.000Z',
  '2024-01-31T23:59:59.999Z',
  '2024-02-01T00:00:00.000Z',
  '2024-02-29T12:00:00.000Z',
  '2024-03-01T00:00:00.000Z',
  '2024-07-04T04:04:04.004Z',
  '2024-12-31T12:00:00.000Z',
  '2024-12-31T23:59:59.999Z',
  '2025-01-01T00:00:00.000Z',
  '2025-06-15T05:59:59.999Z',
  '2025-06-15T06:00:00.000Z',
  '2025-06-19T23:59:59.999Z',
  '2025-06-20T00:00:00.000Z',
];

/** Windows that start and end mid-month, mid-day, on month and year boundaries, and span years. */
const BOUNDARY_WINDOWS: [string, string][] = [
  ['2024-01-15T00:00:00.000Z', '2025-06-20T00:00:00.000Z'],
  ['2024-01-15T12:00:00.000Z', '2025-06-15T06:00:00.000Z'],
  ['2023-12-31T23:59:59.999Z', '2025-01-01T00:00:00.001Z'],
  ['2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z'],
  ['2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
  ['2024-02-01T00:00:00.000Z', '2024-02-29T12:00:00.001Z'],
  ['2024-01-15T00:00:00.000Z', '2024-01-15T12:00:00.000Z'],
  ['2024-12-31T12:00:00.000Z', '2025-01-01T00:00:00.001Z'],
  ['2024-01-31T23:59:59.999Z', '2024-02-01T00:00:00.001Z'],
  ['2024-01-14T23:59:59.999Z', '2024-12-31T23:59:59.999Z'],
];

async function expectWindowsExact(t: Parameters<typeof temporaryDirectory>[0], index: LocalIndex, pages: readonly IndexedPage[]) {
  for (const [from, to] of BOUNDARY_WINDOWS) {
    const window = { fromMs: Date.parse(from), toMs: Date.parse(to) };
    const expected = pages
      .filter((dated) => dated.datePublished !== null && Date.parse(dated.datePublished) >= window.fromMs && Date.parse(dated.datePublished) < window.toMs)
      .map((dated) => dated.url)
      .sort();
    t.deepEqual(await urlsFound(index, 'ibex', { window, limit: 50 }), expected, `[${from}, ${to})`);
  }
}

test('windows that start or end mid-month, mid-day or on a boundary, within a month or across years, are exact to the millisecond', async (t) => {
  const pages = [
    ...BOUNDARY_INSTANTS.map((iso) => page(`https://when.example/${iso}`, { datePublished: iso, text: 'ibex seen' })),
    page('https://when.example/undated', { text: 'ibex seen' }),
  ];
  const { index } = await openWith(t, pages);
  await expectWindowsExact(t, index, pages);
});

test('rows written when pages also had day labels are found by the same windows, beside rows without them', async (t) => {
  const directory = await temporaryDirectory(t);
  const index = await openLocalIndex(directory, { readConsistencyMs: 0 });
  t.teardown(() => index.close());
  const newer = BOUNDARY_INSTANTS.map((iso) => page(`https://new.example/${iso}`, { datePublished: iso, text: 'ibex now' }));
  const older = BOUNDARY_INSTANTS.map((iso) => page(`https://old.example/${iso}`, { datePublished: iso, text: 'ibex then' }));
  await index.upsert(newer);
  // The rows the previous version wrote: the same labels and a day label ("y:2024-01-15") after them.
  const connection = await lancedb.connect(directory);
  const table = await connection.openTable(PAGES_TABLE);
  const oldRows = older.map((old) => {
    const row = toRow(old, Date.now() * 1000, { vectors: false, titleVector: false });
    return { ...row, filterLabels: [...row.filterLabels, `y:${old.datePublished!.slice(0, 10)}`] };
  });
  await table.add(lancedb.makeArrowTable(oldRows as unknown as Record<string, unknown>[], { schema: pageSchema(null) }));
  table.close();
  connection.close();
  await index.fold();
  await expectWindowsExact(t, index, [...newer, ...older]);
});

test('a term in the title beats the same term once in a long body', async (t) => {
  const { index } = await openWith(t, [
    page('https://body.example/long', { title: 'Island wildlife', text: `${filler(400)} quokka ${filler(400)}` }),
    page('https://title.example/short', { title: 'Quokka', text: `Small marsupials. ${filler(60)}` }),
  ]);
  const { hits } = await index.search(query('quokka'));
  t.deepEqual(
    hits.map((hit) => hit.page.url),
    ['https://title.example/short', 'https://body.example/long'],
  );
  t.true(hits[0]!.score > hits[1]!.score);
});

test('snippets hold the matching passage of the text', async (t) => {
  const { index } = await openWith(t, [
    page('https://zoo.example/a', { text: `${filler(300)} The axolotl regenerates its limbs. ${filler(300)}` }),
  ]);
  const [hit] = (await index.search(query('axolotl limb regeneration'))).hits;
  t.truthy(hit);
  t.true(hit!.snippet.includes('The axolotl regenerates its limbs.'), hit!.snippet);
  t.true([...hit!.snippet].length <= 250);
});

test("'all' matching needs every word; 'any' ranks pages with more of them first", async (t) => {
  const { index } = await openWith(t, [
    page('https://m.example/both', { text: 'lemur and tapir together' }),
    page('https://m.example/one', { text: 'only a lemur here' }),
  ]);
  t.deepEqual(await urlsFound(index, 'lemur tapir', { match: 'all' }), ['https://m.example/both']);
  const { hits } = await index.search(query('lemur tapir'));
  t.deepEqual(
    hits.map((hit) => hit.page.url),
    ['https://m.example/both', 'https://m.example/one'],
  );
});

test('stemming matches inflections; stop-word-only and punctuation queries find nothing and do not fail', async (t) => {
  const { index } = await openWith(t, [page('https://stem.example/a', { text: 'She was running connections.' })]);
  t.deepEqual(await urlsFound(index, 'runs connected'), ['https://stem.example/a']);
  t.deepEqual(await index.search(query('the of and')), { hits: [], total: 0 });
  for (const odd of ['"unbalanced', 'a AND (b OR', "o'brien: x^2 * -y", 'title:foo', '\\ \' ;--']) {
    await t.notThrowsAsync(index.search(query(odd)), odd);
  }
});

test('limit and offset page through the ranking', async (t) => {
  const pages = Array.from({ length: 7 }, (_, n) =>
    page(`https://pages.example/${n}`, { text: `${'gecko '.repeat(n + 1)}${filler(20)}` }),
  );
  const { index } = await openWith(t, pages);
  const all = (await index.search(query('gecko', { limit: 10 }))).hits.map((hit) => hit.page.url);
  t.is(all.length, 7);
  const second = await index.search(query('gecko', { limit: 3, offset: 3 }));
  t.deepEqual(
    second.hits.map((hit) => hit.page.url),
    all.slice(3, 6),
  );
  t.is(second.total, null, 'a full page: the total is not known');
  const last = await index.search(query('gecko', { limit: 3, offset: 6 }));
  t.is(last.total, 7);
});

test('an upsert replaces the page with the same canonical URL', async (t) => {
  const { index } = await openWith(t, [page('https://news.example/story', { title: 'Old headline', text: 'ocelot' })]);
  await index.upsert([page('https://news.example/story', { title: 'New headline', text: 'margay' })]);
  t.deepEqual(await urlsFound(index, 'ocelot'), []);
  t.deepEqual(await urlsFound(index, 'margay'), ['https://news.example/story']);
  t.is((await index.get('https://news.example/story'))?.title, 'New headline');
  t.is((await index.stats()).documents, 1);
});

test('pages sharing a canonical URL are one page; a URL that moves to another canonical leaves no stale copy', async (t) => {
  const canonical = 'https://shop.example/item';
  const { index } = await openWith(t, [
    page('https://shop.example/item?utm=a', { canonicalUrl: canonical, text: 'kinkajou one' }),
    page('https://shop.example/item?utm=b', { canonicalUrl: canonical, text: 'kinkajou two' }),
    page('https://shop.example/old', { text: 'binturong' }),
  ]);
  t.is((await index.stats()).documents, 2);
  t.is((await index.get(canonical))?.text, 'kinkajou two', 'the last of a batch wins');
  await index.upsert([page('https://shop.example/old', { canonicalUrl: 'https://shop.example/new', text: 'binturong' })]);
  t.deepEqual(
    (await index.search(query('binturong'))).hits.map((hit) => hit.page.canonicalUrl),
    ['https://shop.example/new'],
  );
});

test('remove deletes by url or canonical URL and counts what it removed', async (t) => {
  const { index } = await openWith(t, [
    page('https://del.example/a', { text: 'capybara' }),
    page('https://del.example/b?ref=1', { canonicalUrl: 'https://del.example/b', text: 'capybara' }),
    page('https://del.example/c', { text: 'capybara' }),
  ]);
  t.is(await index.remove(['https://del.example/a', 'https://del.example/b', 'https://del.example/missing']), 2);
  t.deepEqual(await urlsFound(index, 'capybara'), ['https://del.example/c']);
  t.is(await index.get('https://del.example/a'), null);
  t.is(await index.remove(['https://del.example/a']), 0);
  t.is(await index.remove([]), 0);
});

test('get finds a page by url or canonical URL, quotes and backslashes included', async (t) => {
  const odd = "https://odd.example/it's\\here?q='x'";
  const { index } = await openWith(t, [
    page('https://get.example/p?x=1', { canonicalUrl: 'https://get.example/p' }),
    page(odd),
  ]);
  t.is((await index.get('https://get.example/p'))?.url, 'https://get.example/p?x=1');
  t.is((await index.get('https://get.example/p?x=1'))?.canonicalUrl, 'https://get.example/p');
  t.is((await index.get(odd))?.url, odd);
  t.is(await index.get("https://get.example/p' OR '1'='1"), null);
});

test('stats count documents and domains; export streams every page', async (t) => {
  const { index } = await openWith(t, DOMAIN_PAGES);
  const stats = await index.stats();
  t.is(stats.documents, 5);
  t.is(stats.domains, 5);
  t.true(stats.bytesOnDisk > 0);
  t.truthy(stats.lastUpdated && Date.parse(stats.lastUpdated) > 0);
  const exported: IndexedPage[] = [];
  for await (const exportedPage of index.export()) exported.push(exportedPage);
  t.deepEqual(
    exported.map((p) => p.url).sort(),
    DOMAIN_PAGES.map((p) => p.url).sort(),
  );
  t.deepEqual(
    exported.find((p) => p.url === DOMAIN_PAGES[0]!.url),
    DOMAIN_PAGES[0],
  );
});

test('a reopened index keeps everything', async (t) => {
  const directory = await temporaryDirectory(t);
  const first = await openLocalIndex(directory);
  await first.upsert(DOMAIN_PAGES);
  await first.upsert([page('https://later.example/z', { text: 'walrus later', datePublished: '2025-05-05T00:00:00.000Z' })]);
  await first.remove(['https://example.org/e']);
  await first.close();
  await t.throwsAsync(first.search(query('walrus')), { message: /after close/ });

  const reopened = await openLocalIndex(directory);
  t.teardown(() => reopened.close());
  t.is((await reopened.stats()).documents, 5);
  t.deepEqual(await urlsFound(reopened, 'walrus', { includeDomains: ['example.com'] }), [
    'https://a.b.example.com/c',
    'https://docs.example.com/b',
    'https://example.com/a',
  ]);
  t.deepEqual(await urlsFound(reopened, 'walrus', { window: { fromMs: Date.UTC(2025, 0, 1), toMs: Date.UTC(2026, 0, 1) } }), [
    'https://later.example/z',
  ]);
  t.is(await reopened.get('https://example.org/e'), null);
});

test('concurrent upserts and searches in one process all land', async (t) => {
  const { index } = await openWith(t, []);
  const writers = Array.from({ length: 5 }, (_, batch) =>
    index.upsert(Array.from({ length: 20 }, (_, n) => page(`https://conc.example/${batch}/${n}`, { text: 'pangolin' }))),
  );
  const readers = Array.from({ length: 20 }, () => index.search(query('pangolin', { limit: 5 })));
  await Promise.all([...writers, ...readers]);
  t.is((await index.stats()).documents, 100);
  t.is((await index.search(query('pangolin', { limit: 50 }))).hits.length, 50);
});

test('rows a dead writer added but never folded, more than searches scan, are folded when the index is next opened', async (t) => {
  const directory = await temporaryDirectory(t);
  const first = await openLocalIndex(directory);
  await first.upsert([page('https://fold.example/indexed', { text: 'okapi indexed' })]);
  await first.close();
  // What a writer killed between its append and its fold leaves behind.
  const connection = await lancedb.connect(directory);
  const table = await connection.openTable(PAGES_TABLE);
  await table.add(
    lancedb.makeArrowTable([toRow(page('https://fold.example/orphan', { text: 'okapi orphan' }), Date.now() * 1000, { vectors: false, titleVector: false })] as unknown as Record<string, unknown>[], {
      schema: pageSchema(null),
    }),
  );
  table.close();
  connection.close();

  // With maxUnindexedRows 0 no search scans unindexed rows: the orphan is found once folded.
  const reopened = await openLocalIndex(directory, { readConsistencyMs: 0, maxUnindexedRows: 0 });
  t.teardown(() => reopened.close());
  t.truthy(await reopened.get('https://fold.example/orphan'), 'committed rows are readable at once');
  const deadline = Date.now() + 30_000;
  let found: string[] = [];
  while (Date.now() < deadline && found.length < 2) {
    found = await urlsFound(reopened, 'okapi');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.deepEqual(found, ['https://fold.example/indexed', 'https://fold.example/orphan']);
  t.is(await reopened.unindexedRows(), 0);
});

test('an index written in another layout is refused with a message saying what to do', async (t) => {
  const directory = await temporaryDirectory(t);
  const connection = await lancedb.connect(directory);
  const otherLayout = new Schema([new Field('url', new Utf8(), false)], new Map([[SCHEMA_VERSION_KEY, '0']]));
  (await connection.createEmptyTable(PAGES_TABLE, otherLayout)).close();
  connection.close();
  await t.throwsAsync(openLocalIndex(directory), { message: /layout 0, this version reads layout 2; export it/ });
});

test('a page\'s markdown is kept beside its text: get and export give it back, a search does not read it', async (t) => {
  const withMarkdown = page('https://md.example/guide', { text: 'Quokka care\nFeed them leaves.', markdown: '## Quokka care\n\n- Feed them leaves.' });
  const textOnly = page('https://md.example/notes', { text: 'quokka notes without markup' });
  const { index } = await openWith(t, [withMarkdown, textOnly]);
  t.deepEqual(await index.get(withMarkdown.url), withMarkdown);
  t.deepEqual(await index.get(textOnly.url), textOnly, 'no markdown field for a page given as text');
  const exported: IndexedPage[] = [];
  for await (const exportedPage of index.export()) exported.push(exportedPage);
  t.deepEqual(exported.find((p) => p.url === withMarkdown.url), withMarkdown);
  const { hits } = await index.search(query('quokka'));
  t.is(hits.length, 2);
  for (const hit of hits) t.false('markdown' in hit.page);
});

test('an index made before the markdown column is read as it is, and a writer adds the column', async (t) => {
  const directory = await temporaryDirectory(t);
  const old = page('https://md.example/old', { text: 'tapir before markdown' });
  // The table as an earlier version made it: the same layout without the markdown column.
  const connection = await lancedb.connect(directory);
  const schema = pageSchema(null);
  const earlier = new Schema(schema.fields.filter((field) => field.name !== 'markdown'), schema.metadata);
  const table = await connection.createEmptyTable(PAGES_TABLE, earlier);
  const { markdown: _dropped, ...oldRow } = toRow(old, Date.now() * 1000, { vectors: false, titleVector: false });
  await table.add(lancedb.makeArrowTable([oldRow] as unknown as Record<string, unknown>[], { schema: earlier }));
  t.false((await table.schema()).fields.some((field) => field.name === 'markdown'));
  table.close();
  connection.close();

  const reader = await openLocalIndex(directory, { readOnly: true, readConsistencyMs: 0 });
  t.teardown(() => reader.close());
  t.deepEqual(await reader.get(old.url), old);

  const writer = await openLocalIndex(directory);
  t.teardown(() => writer.close());
  const added = page('https://md.example/new', { text: 'tapir after markdown', markdown: '# Tapir\n\nafter markdown' });
  await writer.upsert([added]);
  t.deepEqual(await writer.get(added.url), added);
  t.deepEqual(await writer.get(old.url), old, 'old rows have no markdown');
  t.deepEqual(await urlsFound(writer, 'tapir'), [added.url, old.url].sort());

  // A reader opened before the column existed reads it once it looks at the table's layout again.
  let seen = await reader.get(added.url);
  for (const deadline = Date.now() + 15_000; !seen?.markdown && Date.now() < deadline; seen = await reader.get(added.url)) {
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  t.deepEqual(seen, added);
});

test("opening an index bounds Lance's scan read-ahead, unless the operator set it", async (t) => {
  // In children: Lance reads the setting once per process, and this process's may be set already.
  const script = `
    const { openLocalIndex, LANCE_IO_BUFFER_BYTES } = await import(${JSON.stringify(new URL('../../../src/local/index/index.js', import.meta.url).href)});
    const index = await openLocalIndex(process.argv[1]);
    await index.close();
    console.log(JSON.stringify({ set: process.env.LANCE_DEFAULT_IO_BUFFER_SIZE, ours: String(LANCE_IO_BUFFER_BYTES) }));`;
  const directory = await temporaryDirectory(t);
  const run = (env: NodeJS.ProcessEnv) =>
    JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script, directory], { env, encoding: 'utf8' })) as { set: string; ours: string };
  const { LANCE_DEFAULT_IO_BUFFER_SIZE: _, ...withoutSetting } = process.env;
  const byDefault = run(withoutSetting);
  t.is(byDefault.set, byDefault.ours);
  t.true(Number(byDefault.ours) <= 256 * 1_048_576, "well under Lance's own 2 GiB");
  t.is(run({ ...withoutSetting, LANCE_DEFAULT_IO_BUFFER_SIZE: '1073741824' }).set, '1073741824');
});

test('every fold leaves the table as one fragment, so that the next fold copies only the rows appended since', async (t) => {
  const directory = await temporaryDirectory(t);
  const index = await openLocalIndex(directory, { keepVersionsMs: 0 });
  t.teardown(() => index.close());
  const dataFiles = async () => (await readdir(join(directory, PAGES_TABLE + '.lance', 'data'))).length;
  const added: string[] = [];
  for (const round of [1, 2, 3]) {
    const pages = Array.from({ length: 40 }, (_, i) => page(`https://round${round}.example/${i}`, { text: `wombat round ${round} ${filler(30)}` }));
    await index.upsert(pages);
    added.push(...pages.map((one) => one.url));
    // With no version kept, what is left on disk is the current version's fragments alone.
    t.is(await dataFiles(), 1, `after fold ${round}`);
    t.is(await index.unindexedRows(), 0);
  }
  t.deepEqual(await urlsFound(index, 'wombat', { limit: 200 }), added.sort());
});
