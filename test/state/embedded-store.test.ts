import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EmbeddedStore, MemoryRateWindows } from '../../src/state/embedded.js';
import { storeContract } from '../helpers/store-contract.js';

const directory = mkdtempSync(join(tmpdir(), 'searchgate-embedded-'));
test.after.always(() => rmSync(directory, { recursive: true, force: true }));
let opened = 0;
const freshPath = () => join(directory, `store-${++opened}.db`);

storeContract(test, 'embedded', async () => new EmbeddedStore({ path: freshPath() }));

/**
 * kill -9 in the middle of a stream of charges: every charge the child reported as committed is in
 * the file when it is opened again, and so are the account and key created before.
 */
for (const synchronous of ['full', 'normal'] as const) {
  test(`embedded (${synchronous}): a committed key and every committed charge survive kill -9`, async (t) => {
    const path = freshPath();
    const writer = new URL('../helpers/embedded-writer.js', import.meta.url).pathname;
    const child = spawn(process.execPath, [writer, path, synchronous], { stdio: ['ignore', 'pipe', 'inherit'] });
    // 'exit' can come before the parent has read what the child left in the pipe; 'close' comes
    // only after stdout has ended, so `output` then holds every line the child wrote.
    const closed = new Promise((resolve) => child.once('close', resolve));
    let output = '';
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const charged = [...output.matchAll(/charged (\d+)\n/g)].at(-1)?.[1];
        if (charged !== undefined && Number(charged) >= 300) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.once('exit', () => reject(new Error(`writer exited early: ${output.slice(-200)}`)));
    });
    await closed;
    t.is(child.signalCode, 'SIGKILL');
    const [, keyId, accountId] = /key (\S+) (\S+)\n/.exec(output)!;
    // The writer charges again only once its last report is in the pipe, so every report is in
    // `output` once the pipe is drained; at most one more charge may have committed unreported.
    const lastReported = Number([...output.matchAll(/charged (\d+)\n/g)].at(-1)![1]);

    const store = new EmbeddedStore({ path });
    t.teardown(() => store.close());
    await store.migrate();
    const credential = await store.findCredential(keyId!);
    t.is(credential?.account.name, 'crash');
    const [usage] = await store.usage(accountId!, '2030-01-01', '2030-01-01');
    t.true(usage!.used >= lastReported && usage!.used <= lastReported + 1, `used ${usage?.used}, last reported ${lastReported}`);
    t.is(store.db.pragma('integrity_check', { simple: true }), 'ok');
  });
}

test('memory rate windows: fixed second and minute windows, refusals count nothing, 0 switches a window off', async (t) => {
  const windows = new MemoryRateWindows();
  const refusal = async (...hit: Parameters<MemoryRateWindows['hit']>) => (await windows.hit(...hit)).refusal;
  const start = Date.UTC(2030, 0, 1, 0, 0, 0);
  const limits = { perSecond: 2, perMinute: 3 };
  t.is(await refusal('a', limits, start), undefined);
  t.is(await refusal('a', limits, start + 10), undefined);
  t.deepEqual(await refusal('a', limits, start + 400), { window: 'second', limit: 2, retryAfterMs: 600 });
  t.is(await refusal('b', limits, start + 400), undefined, 'accounts are counted apart');
  t.is(await refusal('a', limits, start + 1000), undefined);
  t.deepEqual(await refusal('a', limits, start + 2000), { window: 'minute', limit: 3, retryAfterMs: 58_000 });
  t.is(await refusal('a', { perSecond: 0, perMinute: 0 }, start + 2000), undefined);
  t.is(await refusal('a', limits, start + 60_000), undefined, 'the next minute admits again');
});
