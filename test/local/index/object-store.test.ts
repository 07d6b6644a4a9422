/**
 * One index on S3-compatible object storage (issue 20), against a real S3 server (moto): one writer
 * (`searchgate index add --dir s3://…`) and replica gateways in their own processes, each serving
 * a local copy of the index that it keeps in step with the store.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { parseIndexLocation } from '../../../src/local/index/location.js';
import { manifestVersion } from '../../../src/local/index/mirror.js';
import { ObjectStore } from '../../../src/local/index/object-store.js';
import { claimWriter, honoursConditionalPut } from '../../../src/local/index/writer-lease.js';
import { runCli } from '../../helpers/cli.js';
import { ABSENT_LOCAL_RERANKER, TEST_KEY } from '../../helpers/gateway.js';
import { startReplica, type Replica } from '../../helpers/replica.js';
import { s3Environment, startS3Server, unconditionalRelay, type S3Server } from '../../helpers/s3-server.js';

/** A value no log line may ever show. */
const SECRET = 'sgtest-secret-9f8e7d6c5b4a';
const POLL_MS = 300;
const STORE_TIMEOUT_MS = 800;

let s3: S3Server;
let buckets = 0;

test.before(async () => {
  s3 = await startS3Server();
  // The in-process parts (the writer's claim) read the same variables as the CLI and the replicas.
  Object.assign(process.env, s3Environment(s3.endpoint, SECRET));
});
test.after.always(async () => {
  await s3?.stop();
});

async function freshBucket(): Promise<string> {
  const bucket = `index-test-${++buckets}`;
  await s3.createBucket(bucket);
  return bucket;
}

interface PageLine {
  url: string;
  title: string;
  text: string;
}

async function writeIndex(t: ExecutionContext, uri: string, pages: PageLine[], env: Record<string, string> = {}, options: string[] = []) {
  const file = join(mkdtempSync(join(tmpdir(), 'searchgate-s3-pages-')), 'pages.jsonl');
  writeFileSync(file, pages.map((page) => JSON.stringify(page)).join('\n') + '\n');
  const run = await runCli(['index', 'add', file, '--dir', uri, '--no-vectors', ...options], { env: { ...s3Environment(s3.endpoint, SECRET), ...env } });
  t.is(run.code, 0, run.stderr);
  return run;
}

function replicaConfig(uri: string) {
  const state = mkdtempSync(join(tmpdir(), 'searchgate-replica-'));
  return {
    auth: { keys: [{ name: 'test', key: TEST_KEY }] },
    logging: { level: 'warn' },
    cache: { enabled: false },
    content: { chain: [] },
    accounts: { embedded: { path: join(state, 'accounts.db') } },
    providers: {
      'local-reranker': ABSENT_LOCAL_RERANKER,
      local: { type: 'local', directory: uri, vectorModel: 'none', mirror: { directory: join(state, 'mirror'), pollIntervalMs: POLL_MS, storeTimeoutMs: STORE_TIMEOUT_MS } },
    },
    search: { chain: ['local'] },
  };
}

async function search(replica: Replica, query: string) {
  const response = await fetch(`${replica.url}/v1/web-search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, count: 10 }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

const urlsOf = (body: any): string[] => body.data.webPages.value.map((result: any) => result.url);

async function eventually<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const readyz = async (replica: Replica) => (await (await fetch(`${replica.url}/readyz`)).json()) as any;

const PAGES: PageLine[] = [
  { url: 'https://docs.example/vacuum', title: 'Routine vacuuming', text: 'Vacuuming reclaims storage held by dead tuples in large tables.' },
  { url: 'https://docs.example/analyze', title: 'Planner statistics', text: 'Analyze collects statistics about the contents of tables for the planner.' },
  { url: 'https://blog.example/tuning', title: 'Tuning autovacuum', text: 'How to tune autovacuum thresholds so that vacuuming keeps up.' },
];

test('index locations: directories as before, s3:// URIs with a bucket and a prefix, other schemes refused', (t) => {
  t.deepEqual(parseIndexLocation('data/index'), { kind: 'directory', path: 'data/index' });
  t.deepEqual(parseIndexLocation('s3://my-bucket/a/b/'), { kind: 'object-store', uri: 's3://my-bucket/a/b', bucket: 'my-bucket', prefix: 'a/b' });
  t.deepEqual(parseIndexLocation('s3://my-bucket'), { kind: 'object-store', uri: 's3://my-bucket', bucket: 'my-bucket', prefix: '' });
  t.throws(() => parseIndexLocation('gs://bucket/x'), { message: /only local directories and s3:\/\/ URIs/ });
  t.throws(() => parseIndexLocation('s3://Bad_Bucket/x'), { message: /not a valid bucket name/ });
  // Both manifest namings LanceDB uses: the version itself, and u64::MAX minus it (newest first in key order).
  t.is(manifestVersion('pages.lance/_versions/7.manifest'), 7);
  t.is(manifestVersion('pages.lance/_versions/18446744073709551611.manifest'), 4);
});

test.serial('one writer, two replicas: both serve the same results, and a page the writer adds reaches both within a few polls', async (t) => {
  t.timeout(120_000);
  const uri = `s3://${await freshBucket()}/search/index`;
  await writeIndex(t, uri, PAGES);
  const replicas = await Promise.all([startReplica(t, replicaConfig(uri), s3Environment(s3.endpoint, SECRET)), startReplica(t, replicaConfig(uri), s3Environment(s3.endpoint, SECRET))]);

  const first = await Promise.all(replicas.map((replica) => eventually(async () => {
    const answer = await search(replica, 'vacuuming');
    return answer.status === 200 ? answer.body : undefined;
  }, 20_000, 'the replica serves its copy')));
  t.deepEqual(urlsOf(first[0]), urlsOf(first[1]));
  t.true(urlsOf(first[0]).includes('https://docs.example/vacuum'));
  t.deepEqual(
    first[0].data.webPages.value.map((result: any) => [result.url, result.snippet, result.name]),
    first[1].data.webPages.value.map((result: any) => [result.url, result.snippet, result.name]),
  );

  await writeIndex(t, uri, [{ url: 'https://new.example/freezing', title: 'Freezing tuples', text: 'Freezing prevents transaction id wraparound in old tuples.' }]);
  const written = Date.now();
  for (const replica of replicas) {
    await eventually(async () => ((await search(replica, 'wraparound')).body.data?.webPages?.value?.some((r: any) => r.url === 'https://new.example/freezing') ? true : undefined), 15_000, 'the new page on the replica');
  }
  t.log(`the new page was found on both replicas ${Date.now() - written} ms after the writer returned (poll interval ${POLL_MS} ms)`);

  const ready = await readyz(replicas[0]!);
  t.is(ready.status, 'ready');
  t.is(ready.indexReplicas[0].location, uri);
  t.true(ready.indexReplicas[0].storeReachable);
  t.true(ready.indexReplicas[0].version >= 2);
  const metrics = await (await fetch(`${replicas[0]!.url}/metrics`)).text();
  t.regex(metrics, new RegExp(`searchgate_index_replica_version\\{location="${uri}"\\} ${ready.indexReplicas[0].version}`));
  for (const replica of replicas) t.false(replica.log().includes(SECRET));
});

/** What a replica's sync copies: every file but LanceDB's version hint, which it rewrites in place. */
const isCopied = (object: { key: string }) => !object.key.startsWith('pages.lance/_versions/') || manifestVersion(object.key) !== null;

test.serial('after a small commit a replica copies only the files the commit added; `index fold` then rewrites the table', async (t) => {
  t.timeout(120_000);
  const bucket = await freshBucket();
  const uri = `s3://${bucket}/small-commits`;
  await writeIndex(t, uri, PAGES, {}, ['--fold']);
  const store = new ObjectStore(bucket, 'small-commits', 5000);
  t.teardown(() => store.close());
  const listing = async () => new Map((await store.list('pages.lance/')).map((object) => [object.key, object]));
  const newestVersion = (objects: Map<string, { key: string }>) => Math.max(...[...objects.keys()].map((key) => manifestVersion(key) ?? 0));
  const config = replicaConfig(uri);
  const replica = await startReplica(t, config, s3Environment(s3.endpoint, SECRET));
  await eventually(async () => ((await search(replica, 'vacuuming')).status === 200 ? true : undefined), 20_000, 'the replica serves its copy');
  const before = await listing();
  await eventually(async () => ((await readyz(replica)).indexReplicas[0].version === newestVersion(before) ? true : undefined), 15_000, 'the replica on the newest version');
  const copiedBefore: number = (await readyz(replica)).indexReplicas[0].bytesCopied;
  const sizeOf = (objects: Iterable<{ key: string; size: number }>) => [...objects].filter(isCopied).reduce((total, object) => total + object.size, 0);
  t.is(copiedBefore, sizeOf(before.values()), 'the first sync copied the whole index');

  await writeIndex(t, uri, [{ url: 'https://new.example/freezing', title: 'Freezing tuples', text: 'Freezing prevents transaction id wraparound in old tuples.' }]);
  const after = await listing();
  t.deepEqual([...before.keys()].filter((key) => !after.has(key)), [], 'no file of the index was rewritten or deleted');
  await eventually(async () => ((await readyz(replica)).indexReplicas[0].version === newestVersion(after) ? true : undefined), 15_000, 'the replica on the commit\'s version');
  // The copy holds the version now; LanceDB in the replica opens it at its next look (readConsistencyMs, 1 s).
  await eventually(async () => (urlsOf((await search(replica, 'wraparound')).body).includes('https://new.example/freezing') ? true : undefined), 5_000, 'the commit\'s page found on the replica');
  const added = [...after.values()].filter((object) => !before.has(object.key));
  const copied = (await readyz(replica)).indexReplicas[0].bytesCopied - copiedBefore;
  t.is(copied, sizeOf(added), added.map((object) => object.key).join(', '));
  t.log(`a one-page commit: the replica copied ${copied} of the index's ${sizeOf(after.values())} bytes (${added.length} files)`);

  const fold = await runCli(['index', 'fold', '--dir', uri], { env: s3Environment(s3.endpoint, SECRET) });
  t.is(fold.code, 0, fold.stderr);
  t.regex(fold.stdout, /folded 1 unindexed page/);
  const folded = await listing();
  const dataFiles = (objects: Map<string, unknown>) => [...objects.keys()].filter((key) => key.startsWith('pages.lance/data/'));
  t.deepEqual(dataFiles(after).filter((key) => folded.has(key)), [], 'the fold rewrote every data file and removed the old ones');
  t.is(dataFiles(folded).length, 1);
  // The copy serves the folded version, and drops the files the store lost once no query can be on them.
  await eventually(async () => ((await readyz(replica)).indexReplicas[0].version === newestVersion(folded) ? true : undefined), 15_000, 'the replica on the folded version');
  t.deepEqual(urlsOf((await search(replica, 'wraparound')).body), ['https://new.example/freezing']);
  const copy = join(config.providers.local.mirror.directory, bucket, 'small-commits');
  const copiedFiles = async () => (await readdir(copy, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile()).map((entry) => relative(copy, join(entry.parentPath, entry.name)).split(sep).join('/')).sort();
  const expected = [...folded.values()].filter(isCopied).map((object) => object.key).sort();
  await eventually(async () => (JSON.stringify(await copiedFiles()) === JSON.stringify(expected) ? true : undefined), 20_000, 'the copy holding the store\'s files and no others');
});

test.serial('a store that is down, then hanging: replicas keep answering from their copy, and say how stale it is', async (t) => {
  t.timeout(120_000);
  const uri = `s3://${await freshBucket()}/outage`;
  await writeIndex(t, uri, PAGES);
  const replica = await startReplica(t, replicaConfig(uri), s3Environment(s3.endpoint, SECRET));
  const before = await eventually(async () => {
    const answer = await search(replica, 'planner statistics');
    return answer.status === 200 ? answer.body : undefined;
  }, 20_000, 'the replica serves its copy');
  t.teardown(() => s3.setMode('up'));

  for (const mode of ['down', 'hung'] as const) {
    await s3.setMode(mode);
    const failedBefore = (await readyz(replica)).indexReplicas[0].syncs.failed;
    // A few polls go by, each failing on its own deadline, while every search is still answered.
    await eventually(async () => ((await readyz(replica)).indexReplicas[0].syncs.failed >= failedBefore + 2 ? true : undefined), 15_000, `failed syncs with the store ${mode}`);
    const during = await search(replica, 'planner statistics');
    t.is(during.status, 200, `store ${mode}`);
    t.deepEqual(urlsOf(during.body), urlsOf(before));
    const ready = await readyz(replica);
    t.is(ready.status, 'degraded');
    t.true(ready.degraded.includes(`index:${uri}`));
    t.false(ready.indexReplicas[0].storeReachable);
    t.true(ready.indexReplicas[0].syncedSecondsAgo >= (2 * POLL_MS) / 1000, JSON.stringify(ready.indexReplicas[0]));
    const metrics = await (await fetch(`${replica.url}/metrics`)).text();
    t.regex(metrics, /searchgate_index_replica_syncs\{location="[^"]+",outcome="failed"\} [1-9]/);
  }

  await s3.setMode('up');
  await eventually(async () => ((await readyz(replica)).status === 'ready' ? true : undefined), 15_000, 'ready again once the store answers');
  t.false(replica.log().includes(SECRET));
});

test.serial('a replica that starts while the store is unreachable and has no copy answers 503 with a clear message', async (t) => {
  t.timeout(60_000);
  const uri = `s3://${await freshBucket()}/never-copied`;
  await writeIndex(t, uri, PAGES);
  await s3.setMode('down');
  t.teardown(() => s3.setMode('up'));
  const replica = await startReplica(t, replicaConfig(uri), s3Environment(s3.endpoint, SECRET));
  const answer = await search(replica, 'vacuuming');
  t.is(answer.status, 503);
  t.regex(answer.body.message ?? answer.body.msg ?? JSON.stringify(answer.body), /cannot be read .* has no copy of it yet/);
  const ready = await readyz(replica);
  t.true(ready.degraded.includes(`index:${uri}`));
  t.is(ready.indexReplicas[0].version, null);

  // Once the store is back, the next search makes the copy and is answered.
  await s3.setMode('up');
  const after = await search(replica, 'vacuuming');
  t.is(after.status, 200);
  t.true(urlsOf(after.body).includes('https://docs.example/vacuum'));
  t.false(replica.log().includes(SECRET));
});

test.serial('a replica restarted while the store is unreachable serves the copy it kept on disk', async (t) => {
  t.timeout(90_000);
  const uri = `s3://${await freshBucket()}/restart`;
  await writeIndex(t, uri, PAGES);
  const config = replicaConfig(uri);
  const first = await startReplica(t, config, s3Environment(s3.endpoint, SECRET));
  const before = await eventually(async () => {
    const answer = await search(first, 'planner statistics');
    return answer.status === 200 ? answer.body : undefined;
  }, 20_000, 'the first replica serves its copy');
  await first.stop();

  await s3.setMode('down');
  t.teardown(() => s3.setMode('up'));
  // The same config, so the same mirror directory: what a restarted replica finds on its disk.
  const second = await startReplica(t, config, s3Environment(s3.endpoint, SECRET));
  const after = await search(second, 'planner statistics');
  t.is(after.status, 200, JSON.stringify(after.body));
  t.deepEqual(urlsOf(after.body), urlsOf(before));
  const ready = await readyz(second);
  t.true(ready.degraded.includes(`index:${uri}`));
  t.false(ready.indexReplicas[0].storeReachable);
  t.not(ready.indexReplicas[0].version, null);
});

test.serial('a second writer is refused on a store that ignores conditional PUT, and allowed on one that honours it', async (t) => {
  const bucket = await freshBucket();
  const honouring = new ObjectStore(bucket, 'writers', 5000);
  t.teardown(() => honouring.close());
  t.true(await honoursConditionalPut(honouring));
  const [a, b] = [await claimWriter(honouring, `s3://${bucket}/writers`), await claimWriter(honouring, `s3://${bucket}/writers`)];
  t.true(a.conditionalPut && b.conditionalPut);
  await Promise.all([a.release(), b.release()]);

  const relay = await unconditionalRelay(s3.directEndpoint);
  t.teardown(() => relay.close());
  const saved = process.env.AWS_ENDPOINT_URL;
  process.env.AWS_ENDPOINT_URL = relay.endpoint;
  t.teardown(() => {
    process.env.AWS_ENDPOINT_URL = saved;
  });
  const ignoring = new ObjectStore(bucket, 'writers', 5000);
  t.teardown(() => ignoring.close());
  t.false(await honoursConditionalPut(ignoring));
  const holder = await claimWriter(ignoring, `s3://${bucket}/writers`);
  t.false(holder.conditionalPut);

  // The CLI, as a second writer at the same time, is refused and says why.
  const uri = `s3://${bucket}/writers`;
  const file = join(mkdtempSync(join(tmpdir(), 'searchgate-s3-pages-')), 'pages.jsonl');
  writeFileSync(file, `${JSON.stringify(PAGES[0])}\n`);
  const refused = await runCli(['index', 'add', file, '--dir', uri, '--no-vectors'], { env: s3Environment(relay.endpoint, SECRET) });
  t.not(refused.code, 0);
  t.regex(refused.stderr, /another writer .* does not honour conditional PUT/);
  t.false(refused.stderr.includes(SECRET));

  // Once the first lets go, the same command writes.
  await holder.release();
  const accepted = await runCli(['index', 'add', file, '--dir', uri, '--no-vectors'], { env: s3Environment(relay.endpoint, SECRET) });
  t.is(accepted.code, 0, accepted.stderr);
  t.false(`${accepted.stdout}${accepted.stderr}`.includes(SECRET));
  // ...and leaves no lease behind for the next writer.
  t.deepEqual(
    (await ignoring.list('_searchgate/')).map((object) => object.key),
    [],
  );
});

test.serial('the index on the store is the writer\'s alone: stats and export read it without writing a version', async (t) => {
  const bucket = await freshBucket();
  const uri = `s3://${bucket}/read-only`;
  await writeIndex(t, uri, PAGES);
  const store = new ObjectStore(bucket, 'read-only', 5000);
  t.teardown(() => store.close());
  const versions = async () => (await store.list('pages.lance/_versions/')).length;
  const before = await versions();
  const stats = await runCli(['index', 'stats', '--dir', uri, '--json'], { env: s3Environment(s3.endpoint, SECRET) });
  t.is(stats.code, 0, stats.stderr);
  const parsed = JSON.parse(stats.stdout);
  t.is(parsed.documents, 3);
  t.true(parsed.bytesOnDisk > 0);
  const exported = await runCli(['index', 'export', '--dir', uri], { env: s3Environment(s3.endpoint, SECRET) });
  t.is(exported.stdout.trim().split('\n').length, 3);
  t.is(await versions(), before);
});
