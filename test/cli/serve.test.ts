import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import test from 'ava';
import { TEST_KEY, searchEnvelope, sendJson, startUpstream } from '../helpers/gateway.js';

const CLI = 'dist/src/cli/main.js';

function writeConfig(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'searchgate-cli-'));
  const path = join(dir, 'config.yaml');
  writeFileSync(path, yaml);
  return path;
}

test('a config that fails validation stops startup with a message naming the key', async (t) => {
  const path = writeConfig('server:\n  requestTimeoutMs: -1\n');
  const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...process.env, SEARCHGATE_CONFIG: path, PORT: '0' } });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = await once(child, 'close');
  t.is(code, 78);
  t.regex(stderr, /invalid configuration: config key server\.requestTimeoutMs must be >= 1/);
});

test('serve answers over HTTP with JSON logs, and SIGTERM finishes in-flight requests before exiting', async (t) => {
  let releaseSlowReply: () => void = () => {};
  const upstream = await startUpstream((request, res) => {
    const reply = () => sendJson(res, 200, searchEnvelope([{ url: 'https://a.example/', name: 'A', snippet: (request.body as any).query }]));
    if ((request.body as any).query === 'slow') releaseSlowReply = reply;
    else reply();
  });
  t.teardown(() => upstream.close());
  const path = writeConfig(
    [
      'auth: {keys: [{name: cli, key: "${CLI_KEY}"}]}',
      `providers: {up: {type: searchgate-compatible, baseUrl: "${upstream.url}"}}`,
      'search: {chain: [up]}',
      'cache: {enabled: false}',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, SEARCHGATE_CONFIG: path, PORT: '0', HOST: '127.0.0.1', CLI_KEY: TEST_KEY },
  });
  t.teardown(() => child.kill('SIGKILL'));
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  while (!/"msg":"listening"/.test(stdout)) await once(child.stdout, 'data');
  const listening = JSON.parse(stdout.split('\n').find((line) => line.includes('"listening"'))!);
  const base = listening.address as string;
  const post = (query: string) =>
    fetch(`${base}/v1/web-search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
  t.is((await post('fast')).status, 200);

  const slow = post('slow');
  while (upstream.requests.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  child.kill('SIGTERM');
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.is(child.exitCode, null, 'still running while a request is in flight');
  releaseSlowReply();
  const response = await slow;
  t.is(response.status, 200);
  t.is(((await response.json()) as any).data.webPages.value[0].snippet, 'slow');
  const [code] = await once(child, 'close');
  t.is(code, 0);
  const lines = stdout.trim().split('\n').map((line) => JSON.parse(line));
  t.true(lines.some((line) => line.msg === 'shutting down' && line.signal === 'SIGTERM'));
  t.true(lines.some((line) => line.msg === 'request' && line.status === 200 && typeof line.log_id === 'string'));
  t.false(stdout.includes(TEST_KEY));
});
