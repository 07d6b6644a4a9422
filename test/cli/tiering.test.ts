/** A batch's process lets its functions run longer before V8 optimises them. */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test from 'ava';

const BATCH = fileURLToPath(new URL('../../src/cli/extract-batch.js', import.meta.url));
const FETCH = fileURLToPath(new URL('../../src/local/fetch/index.js', import.meta.url));

/**
 * How many calls a small function takes to be optimised in a fresh process, after `setup` ran
 * there. V8's natives report the function's state. Without concurrent compiling, the count
 * depends only on the budget, not on the machine's speed.
 */
function callsUntilOptimised(setup: string): number {
  const script = `
    const { runBatch } = await import(${JSON.stringify(BATCH)});
    const { fetchPolicy } = await import(${JSON.stringify(FETCH)});
    const { PassThrough } = await import('node:stream');
    ${setup}
    const hot = new Function('x', 'let s = 0; for (let i = 0; i < 8; i++) s += x * i; return s;');
    const isOptimised = new Function('f', 'return (%GetOptimizationStatus(f) & 16) !== 0;');
    let calls = 0;
    while (!isOptimised(hot) && calls < 1e7) { hot(calls); calls += 1; }
    process.stdout.write(String(calls));
  `;
  const output = execFileSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return Number(output);
}

test('after a batch has started, a function runs about six times as long before V8 optimises it', (t) => {
  const plain = callsUntilOptimised('');
  const inBatch = callsUntilOptimised(
    "await runBatch([], { workers: 1, fetchPolicy: fetchPolicy(), output: new PassThrough(), log: new PassThrough() });",
  );
  t.true(plain > 0 && plain < 1e7, `optimised after ${plain} calls in a plain process`);
  t.true(inBatch >= 4 * plain && inBatch <= 8 * plain, `${inBatch} calls after a batch against ${plain} without`);
});
