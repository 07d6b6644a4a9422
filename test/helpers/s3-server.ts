/**
 * A real S3-compatible server for tests: moto's standalone server (from the pinned "s3-server" venv
 * of scripts/client-venvs.sh) on 127.0.0.1, behind a TCP relay the test can cut or stall, so that a
 * store that is down, or one that accepts connections and never answers, can be staged.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deadPort, startTcpProxy } from './tcp-proxy.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../..');

export interface S3Server {
  /** The relay's endpoint, for AWS_ENDPOINT_URL. */
  endpoint: string;
  /** moto itself, bypassing the relay (e.g. to stage a second, unconditional store). */
  directEndpoint: string;
  createBucket(name: string): Promise<void>;
  /** 'up' relays; 'down' cuts every connection at once; 'hung' accepts and never answers. */
  setMode(mode: 'up' | 'down' | 'hung'): Promise<void>;
  /** Requests moto has served so far (its log lines). */
  requests(): number;
  stop(): Promise<void>;
}

/** moto's server from the pinned "s3-server" venv of scripts/client-venvs.sh, built first if it is not ready. */
export function motoServerPath(): string {
  execFileSync('bash', [join(REPO, 'scripts/client-venvs.sh')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const printed = execFileSync('bash', [join(REPO, 'scripts/client-venvs.sh'), '--print'], { encoding: 'utf8' });
  const python = /^s3-server: (.+)$/m.exec(printed)?.[1];
  if (!python) throw new Error(`scripts/client-venvs.sh --print named no s3-server venv: ${printed}`);
  return join(dirname(python), 'moto_server');
}

async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 150; attempt++) {
    if (child.exitCode !== null) throw new Error(`moto_server exited with ${child.exitCode}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`moto_server did not answer at ${url}`);
}

export async function startS3Server(): Promise<S3Server> {
  const motoPort = await deadPort();
  const moto = spawn(motoServerPath(), ['-H', '127.0.0.1', '-p', String(motoPort)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let served = 0;
  moto.stderr!.on('data', (chunk: Buffer) => (served += chunk.toString().split('\n').filter((line) => / HTTP\/1\.1" \d{3}/.test(line)).length));
  const directEndpoint = `http://127.0.0.1:${motoPort}`;
  await waitForHttp(directEndpoint, moto);

  const relay = await startTcpProxy({ host: '127.0.0.1', port: motoPort });
  const RELAY_MODES = { up: 'forward', down: 'refuse', hung: 'stall' } as const;

  return {
    endpoint: `http://127.0.0.1:${relay.port}`,
    directEndpoint,
    async createBucket(name) {
      const answer = await fetch(`${directEndpoint}/${name}`, { method: 'PUT' });
      if (!answer.ok) throw new Error(`creating bucket ${name}: ${answer.status}`);
    },
    async setMode(mode) {
      relay.setMode(RELAY_MODES[mode]);
    },
    requests: () => served,
    async stop() {
      await relay.close();
      moto.kill();
      if (moto.exitCode === null) await once(moto, 'exit');
    },
  };
}

/**
 * The same store as one that ignores conditional requests, as s3rver does: an HTTP relay to moto
 * that drops If-None-Match (moto does not check signatures, so the request still goes through).
 */
export async function unconditionalRelay(directEndpoint: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const target = new URL(directEndpoint);
  const server = createHttpServer((req, res) => {
    const headers = { ...req.headers };
    delete headers['if-none-match'];
    const forwarded = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** The environment LanceDB's object_store and the AWS SDK read for this server. */
export function s3Environment(endpoint: string, secret = 'test-secret-key'): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test-access-key',
    AWS_SECRET_ACCESS_KEY: secret,
    AWS_ALLOW_HTTP: 'true',
  };
}
