import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import test from 'ava';

const LAUNCHER = resolve('bin/searchgate');
const NODE_WITH_SETTINGS = resolve('bin/searchgate-node');

/** The environment a running process was started with, from /proc. */
function environmentOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

/** The environment without the settings the launcher adds, so that the test sees the launcher's and not its runner's. */
function plainEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  if (!('MALLOC_ARENA_MAX' in extra)) delete env.MALLOC_ARENA_MAX;
  if (!('NODE_OPTIONS' in extra)) delete env.NODE_OPTIONS;
  return env;
}

test('`searchgate serve` through the installed command runs Node itself with MALLOC_ARENA_MAX=2, and stops on SIGTERM', async (t) => {
  // As npm installs a package's bin: a symlink in another directory.
  const binDirectory = mkdtempSync(join(tmpdir(), 'searchgate-bin-'));
  symlinkSync(LAUNCHER, join(binDirectory, 'searchgate'));
  const config = join(binDirectory, 'config.yaml');
  writeFileSync(config, [
      'auth: {keys: [{name: cli, key: sk-launcher-test-0123456789}]}',
      'providers: {up: {type: searchgate-compatible, baseUrl: "http://127.0.0.1:9"}}',
      'search: {chain: [up]}',
    ].join('\n'));
  const child = spawn(join(binDirectory, 'searchgate'), ['serve'], {
    cwd: binDirectory,
    env: plainEnvironment({ SEARCHGATE_CONFIG: config, PORT: '0', HOST: '127.0.0.1' }),
  });
  t.teardown(() => child.kill('SIGKILL'));
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  while (!/"msg":"listening"/.test(stdout)) await once(child.stdout, 'data');

  // The pid the supervisor holds is Node's: no shell left in between to swallow signals.
  t.is(readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim(), 'node');
  const environment = environmentOf(child.pid!);
  t.is(environment.get('MALLOC_ARENA_MAX'), '2');
  t.false(environment.has('NODE_OPTIONS'), 'no Node option is added');

  child.kill('SIGTERM');
  const [code] = await once(child, 'close');
  t.is(code, 0);
});

test("an operator's own MALLOC_ARENA_MAX is kept, and Node's options pass through", (t) => {
  const probe = 'process.stdout.write(JSON.stringify([process.env.MALLOC_ARENA_MAX, process.execArgv.filter((option) => option.startsWith("--max"))]))';
  const run = (extra: Record<string, string>, nodeOptions: string[] = []) =>
    JSON.parse(execFileSync(NODE_WITH_SETTINGS, [...nodeOptions, '-e', probe], { env: plainEnvironment(extra), encoding: 'utf8' }));
  t.deepEqual(run({}), ['2', []]);
  t.deepEqual(run({ MALLOC_ARENA_MAX: '8' }), ['8', []]);
  t.deepEqual(run({}, ['--max-semi-space-size=4']), ['2', ['--max-semi-space-size=4']]);
});
