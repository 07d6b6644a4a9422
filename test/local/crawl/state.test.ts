import { appendFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { CrawlState } from '../../../src/local/crawl/state.js';

function statePath(): string {
  return join(mkdtempSync(join(tmpdir(), 'searchgate-state-')), 'nested', 'state.jsonl');
}

const item = (path: string, depth = 0) => ({ url: `https://example.org${path}`, depth, kind: 'page' as const, site: 'example.org' });

test('a reopened state has the same frontier, finished URLs, page count and content hashes', (t) => {
  const path = statePath();
  const state = CrawlState.open(path);
  t.false(state.resumed);
  t.true(state.add(item('/')));
  t.false(state.add(item('/')), 'a URL is queued once');
  state.add(item('/a', 1));
  state.add(item('/b', 1));
  state.claimContentHash('h1');
  state.finish([item('/').url, item('/landing').url], { pageFetch: true, storedHash: 'h1' });

  const reopened = CrawlState.open(path);
  t.true(reopened.resumed);
  t.deepEqual(reopened.pending(), [item('/a', 1), item('/b', 1)]);
  t.true(reopened.isFinished(item('/landing').url), 'a redirect target counts as crawled');
  t.true(reopened.has(item('/').url));
  t.is(reopened.pagesFetched, 1, 'only the requested URL counts against maxPages');
  t.true(reopened.hasContentHash('h1'));
});

test('queued URLs reach the disk with the next finished one, and a torn last line is ignored', (t) => {
  const path = statePath();
  const state = CrawlState.open(path);
  state.add(item('/'));
  state.flush();
  state.add(item('/a', 1));
  t.is(CrawlState.open(path).pending().length, 1, 'not flushed yet');
  state.finish([item('/').url], { pageFetch: true });
  appendFileSync(path, '{"q":"https://example.org/torn","d":');
  t.deepEqual(CrawlState.open(path).pending(), [item('/a', 1)]);
});

test('compaction keeps what is needed and drops the rest; discard removes the file', (t) => {
  const path = statePath();
  const state = CrawlState.open(path);
  for (let n = 0; n < 20; n += 1) state.add(item(`/${n}`));
  state.claimContentHash('h');
  for (let n = 0; n < 15; n += 1) state.finish([item(`/${n}`).url], { pageFetch: n % 2 === 0, storedHash: n === 0 ? 'h' : undefined });
  const before = readFileSync(path, 'utf8').split('\n').length;
  state.compact();
  const after = readFileSync(path, 'utf8').split('\n').length;
  t.true(after < before);
  const reopened = CrawlState.open(path);
  t.is(reopened.pending().length, 5);
  t.is(reopened.pagesFetched, 8);
  t.true(reopened.hasContentHash('h'));
  t.true(reopened.isFinished(item('/3').url));
  reopened.discard();
  t.false(existsSync(path));
});

test('without a path the state lives in memory only', (t) => {
  const state = CrawlState.open(null);
  state.add(item('/'));
  state.finish([item('/').url], { pageFetch: true });
  state.compact();
  t.is(state.pagesFetched, 1);
});
