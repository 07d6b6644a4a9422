/**
 * The index across processes: a writer killed with SIGKILL mid-batch leaves an index that opens,
 * holds every committed batch whole and takes new writes; a server process keeps searching while a
 * CLI process writes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { openLocalIndex } from '../../../src/local/index/index.js';
import type { IndexedPage } from '../../../src/local/types.js';
import { page, query, temporaryDirectory, writerPageUrl } from './helpers.js';

const WRITER = fileURLToPath(new URL('./writer-process.js', import.meta.url));
const BATCH_SIZE = 40;

interface Writer {
  child: ChildProcess;
  /** Batches the writer has reported committed so far. */
  committed: () => number;
  waitForCommits: (count: number) => Promise<void>;
  exited: Promise<unknown>;
}

function startWriter(directory: string, prefix: string, batches: number): Writer {
  const child = spawn(process.execPath, [WRITER, directory, prefix, String(batches), String(BATCH_SIZE)], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let committed = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  // 'close', not 'exit': only then has every line the writer printed been read from the pipe.
  const exited = once(child, 'close');
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const match = /^committed (\d+)$/.exec(line);
    if (!match) return;
    committed = Number(match[1]);
    for (const waiter of waiters.filter((entry) => entry.count <= committed)) waiter.resolve();
  });
  return {
    child,
    committed: () => committed,
    exited,
    waitForCommits: (count) =>
      new Promise<void>((resolve, reject) => {
        if (committed >= count) return resolve();
        waiters.push({ count, resolve });
        void exited.then(() => reject(new Error(`writer exited after ${committed} batches, before ${count}`)));
      }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a writer killed with SIGKILL mid-batch leaves a readable index with every committed batch, whole', async (t) => {
  const directory = await temporaryDirectory(t);
  // Several kills at different moments: inside a merge-insert, inside an index fold, between them.
  const rounds = [
    { prefix: 'r0', killAfterMs: 0 },
    { prefix: 'r1', killAfterMs: 35 },
    { prefix: 'r2', killAfterMs: 90 },
  ];
  const committedBatches = new Map<string, number>();
  for (const round of rounds) {
    const writer = startWriter(directory, round.prefix, 10_000);
    await writer.waitForCommits(2);
    await sleep(round.killAfterMs);
    writer.child.kill('SIGKILL');
    await writer.exited;
    committedBatches.set(round.prefix, writer.committed());
  }

  const index = await openLocalIndex(directory);
  t.teardown(() => index.close());
  const exported: IndexedPage[] = [];
  for await (const stored of index.export()) exported.push(stored);
  const { documents } = await index.stats();
  t.is(exported.length, documents, 'every data file reads back');

  const pagesPerBatch = new Map<string, number>();
  for (const stored of exported) {
    const batchKey = stored.url.split('/').slice(3, 5).join('/');
    pagesPerBatch.set(batchKey, (pagesPerBatch.get(batchKey) ?? 0) + 1);
  }
  for (const [batchKey, count] of pagesPerBatch) t.is(count, BATCH_SIZE, `batch ${batchKey} is whole`);

  for (const [prefix, committed] of committedBatches) {
    for (let batch = 0; batch < committed; batch++) {
      t.truthy(await index.get(writerPageUrl(prefix, batch, 0)), `${prefix} batch ${batch} first page`);
      t.truthy(await index.get(writerPageUrl(prefix, batch, BATCH_SIZE - 1)), `${prefix} batch ${batch} last page`);
    }
    // At most the batch in flight may have committed after its report was cut short.
    t.false(pagesPerBatch.has(`${prefix}/${committed + 1}`), `${prefix}: nothing past the batch in flight`);
  }

  await index.upsert([page('https://after.example/crash', { text: 'survivor quoll' })]);
  t.deepEqual(
    (await index.search(query('quoll'))).hits.map((hit) => hit.page.url),
    ['https://after.example/crash'],
  );
  t.true((await index.search(query('wombat', { limit: 50 }))).hits.length > 0);
});

test('searches keep answering while another process writes, and see its writes', async (t) => {
  const directory = await temporaryDirectory(t);
  const server = await openLocalIndex(directory, { readConsistencyMs: 0 });
  t.teardown(() => server.close());
  await server.upsert([page('https://seed.example/a', { text: 'wombat seed' })]);

  const batches = 12;
  const writer = startWriter(directory, 'cli', batches);
  let writerRunning = true;
  void writer.exited.then(() => (writerRunning = false));

  let searches = 0;
  let lastSeenDocuments = 0;
  const searcher = async () => {
    while (writerRunning) {
      const { hits } = await server.search(query('wombat burrow', { limit: 20, includeDomains: ['writer.example'] }));
      t.true(hits.every((hit) => hit.page.domain === 'writer.example'));
      searches++;
    }
  };
  const watcher = async () => {
    while (writerRunning) {
      const { documents } = await server.stats();
      t.true(documents >= lastSeenDocuments, 'a reader never goes back to an older version');
      lastSeenDocuments = documents;
      await sleep(50);
    }
  };
  await Promise.all([...Array.from({ length: 8 }, searcher), watcher()]);
  const [exitCode] = (await writer.exited) as [number | null];
  t.is(exitCode, 0);
  t.is(writer.committed(), batches);
  t.true(searches > 0);

  t.is((await server.stats()).documents, 1 + batches * BATCH_SIZE);
  t.truthy(await server.get(writerPageUrl('cli', batches - 1, BATCH_SIZE - 1)));
  const { hits } = await server.search(query('wombat', { limit: 50, includeDomains: ['writer.example'] }));
  t.is(hits.length, 50);
});
