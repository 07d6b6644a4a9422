import test from 'ava';
import { IdleCollector } from '../../src/server/idle-collector.js';
import { startGateway } from '../helpers/gateway.js';

const MiB = 2 ** 20;

/** A collector driven by hand: CPU time and heap as the test sets them, collections counted. */
function driven(quietMs: number) {
  const state = { cpuMicros: 0, heapUsed: 100 * MiB, collections: 0 };
  const collector = new IdleCollector({
    quietMs,
    collect: () => {
      state.collections++;
      state.heapUsed = 50 * MiB;
    },
    cpuMicros: () => state.cpuMicros,
    heapUsed: () => state.heapUsed,
  });
  return { state, collector };
}

test('collects once the process has been quiet for quietMs after the heap grew, and not again while it stays idle', (t) => {
  const { state, collector } = driven(1000);
  state.heapUsed = 140 * MiB;
  // Busy: half a core over each 250 ms.
  for (let i = 0; i < 8; i++) {
    state.cpuMicros += 125_000;
    t.false(collector.check(250));
  }
  // Quiet: 1 ms of CPU per 250 ms, four checks make the second of quiet.
  for (let i = 0; i < 3; i++) {
    state.cpuMicros += 1_000;
    t.false(collector.check(250));
  }
  state.cpuMicros += 1_000;
  t.true(collector.check(250));
  t.is(state.collections, 1);
  for (let i = 0; i < 20; i++) {
    state.cpuMicros += 1_000;
    t.false(collector.check(250), 'the heap has not grown since');
  }
  t.is(state.collections, 1);
});

test('work in between starts the quiet period again, and a heap that did not grow is left alone', (t) => {
  const { state, collector } = driven(1000);
  state.heapUsed = 105 * MiB; // 5 MiB over the start: under the growth that makes a collection worth it
  for (let i = 0; i < 10; i++) {
    state.cpuMicros += 1_000;
    t.false(collector.check(250));
  }
  state.heapUsed = 200 * MiB;
  state.cpuMicros += 1_000;
  t.true(collector.check(250), 'quiet long enough, and now grown');
  state.heapUsed = 120 * MiB;
  for (let i = 0; i < 3; i++) {
    state.cpuMicros += 1_000;
    collector.check(250);
  }
  state.cpuMicros += 200_000; // a request
  t.false(collector.check(250));
  for (let i = 0; i < 3; i++) {
    state.cpuMicros += 1_000;
    t.false(collector.check(250), 'quiet again for less than quietMs');
  }
  state.cpuMicros += 1_000;
  t.true(collector.check(250));
  t.is(state.collections, 2);
});

test('a gateway that goes quiet after work collects the heap, logs it and counts it', async (t) => {
  const gateway = await startGateway({ server: { idleCollectMs: 1000 }, logging: { level: 'debug' } });
  t.teardown(() => gateway.close());
  t.is((await fetch(`${gateway.url}/healthz`)).status, 200);
  // Work that leaves old-generation garbage: objects kept across several scavenges, then dropped.
  let kept: object[][] = [];
  for (let round = 0; round < 8; round++) {
    kept.push(Array.from({ length: 50_000 }, (_, i) => ({ round, i, text: `entry ${round} ${i}` })));
    await new Promise((resolve) => setImmediate(resolve));
  }
  kept = [];
  const deadline = Date.now() + 30_000;
  const logged = () => gateway.logLines.find((line) => line.includes('"idle collection"'));
  while (!logged() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  t.truthy(logged(), 'an idle collection was logged');
  const line = JSON.parse(logged()!) as { heap_used_before_mb: number; heap_used_after_mb: number };
  t.true(line.heap_used_after_mb < line.heap_used_before_mb, JSON.stringify(line));
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  t.regex(metrics, /^searchgate_idle_collections_total 1$/m);
});
