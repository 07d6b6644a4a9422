/**
 * What the GET-style search dialect tests share (test/vendors/{brave,bing}/dialect.test.ts): a
 * gateway over the embedded default (a local index seeded with a few pages), and one whose search
 * goes through searchgate's Brave provider to the Brave fake, whose recorded parameters show what
 * reached an upstream (the language, which the scripted searchgate-compatible upstream is not sent).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecutionContext } from 'ava';
import { openLocalIndex } from '../../src/local/index/index.js';
import { contentHash } from '../../src/local/ingest/indexed-page.js';
import type { IndexedPage } from '../../src/local/types.js';
import { searchEnvelope, sendJson, startGateway } from '../helpers/gateway.js';
import type { SearchDialectBench } from '../helpers/search-dialect-bench.js';
import { BRAVE_KEY, startFakeBrave } from './brave/fake.js';

function page(url: string, title: string, text: string, datePublished: string | null): IndexedPage {
  const domain = new URL(url).hostname.replace(/^www\./, '');
  return { url, canonicalUrl: url, title, text, datePublished, domain, language: 'en', fetchedAt: '2026-11-01T00:00:00.000Z', contentHash: contentHash(text) };
}

export const LOCAL_PAGES = [
  page('https://docs.postgres.example/vacuum', 'Routine vacuuming', 'PostgreSQL databases require periodic maintenance known as vacuuming. Autovacuum settings matter.', '2024-05-05T10:00:00.000Z'),
  page('https://blog.postgres.example/tuning', 'Tuning autovacuum', 'How to tune autovacuum thresholds for large tables, and why vacuuming falls behind.', null),
];

/** A gateway whose search chain is the local index of LOCAL_PAGES; both go when the test ends. */
export async function localIndexGateway(t: ExecutionContext) {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-dialect-index-'));
  const index = await openLocalIndex(directory);
  await index.upsert(LOCAL_PAGES);
  await index.close();
  const gateway = await startGateway({ providers: { local: { type: 'local', directory } }, search: { chain: ['local'] } });
  t.teardown(async () => {
    await gateway.close();
    rmSync(directory, { recursive: true, force: true });
  });
  return gateway;
}

/** A gateway whose search chain is searchgate's Brave provider, calling the Brave fake; both go when the test ends. */
export async function braveBackedGateway(t: ExecutionContext) {
  const brave = await startFakeBrave();
  const gateway = await startGateway({ providers: { brave: { type: 'brave', baseUrl: brave.url, apiKey: BRAVE_KEY } }, search: { chain: ['brave'] } });
  t.teardown(async () => {
    await gateway.close();
    await brave.close();
  });
  return {
    gateway,
    /** The search_lang of the last search that reached the fake. */
    lastSearchLanguage: () => brave.params(brave.requests.length - 1).get('search_lang'),
  };
}

/** Makes the bench's upstream answer with results numbered 0.., as many as asked for: a page shows which slice it is. */
export const answerNumbered = (bench: SearchDialectBench) =>
  bench.upstream.answer((request, res) => {
    const results = Array.from({ length: request.body.count }, (_, i) => ({ name: `Result ${i}`, url: `https://n.example/${i}`, snippet: `number ${i}` }));
    sendJson(res, 200, searchEnvelope(results));
  });
