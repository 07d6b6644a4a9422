/** Starts real gateways and real loopback upstreams for the tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { LOCAL_RERANKER, resolveConfig, type ResolvedConfig } from '../../src/config/load.js';
import type { ProviderType } from '../../src/vendors/registry.js';
import { builtInProviderTypes } from '../../src/vendors/registry.js';
import { createGateway, type Gateway } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';

export const TEST_KEY = 'sk-test-0123456789';

/** The real model that scripts/fetch-model.sh prepares (.ci/run fetches it before the tests). */
export const TEST_MODEL_DIRECTORY = process.env.SEARCHGATE_TEST_MODEL_DIR ?? 'models/all-minilm-l6-v2';
export const ABSENT_LOCAL_RERANKER = { type: 'local-reranker', optional: true, model: 'test/no-such-model' };
/** Providers entry that makes a gateway load the real embedded reranker. */
export const REAL_LOCAL_RERANKER = { type: 'local-reranker', model: TEST_MODEL_DIRECTORY };

export interface RunningGateway {
  gateway: Gateway;
  url: string;
  config: ResolvedConfig;
  logLines: string[];
  close(): Promise<void>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

export async function startGateway(
  rawConfig: Record<string, unknown>,
  options: { providerTypes?: Record<string, ProviderType>; now?: () => number; env?: NodeJS.ProcessEnv } = {},
): Promise<RunningGateway> {
  const providerTypes = { ...builtInProviderTypes, ...options.providerTypes };
  // Tests that are not about the embedded reranker do not load it: its implicit default points at a
  // model that is not there (so rerank answers 503), unless the test configures it itself.
  const providers = { [LOCAL_RERANKER]: ABSENT_LOCAL_RERANKER, ...(rawConfig.providers as object | undefined) };
  // Each gateway gets its own embedded account store unless the test configures one.
  const stateDirectory = mkdtempSync(join(tmpdir(), 'searchgate-accounts-'));
  const rawAccounts = (rawConfig.accounts ?? {}) as Record<string, unknown>;
  const accounts = { ...rawAccounts, embedded: rawAccounts.embedded ?? { path: join(stateDirectory, 'accounts.db') } };
  const config = resolveConfig(
    {
      auth: { keys: [{ name: 'test', key: TEST_KEY }] },
      logging: { level: 'info' },
      content: { chain: [] },
      ...rawConfig,
      providers,
      accounts,
    },
    options.env ?? {},
    providerTypes,
  );
  const logLines: string[] = [];
  const logger = createLogger(config.logging.level, (line) => logLines.push(line));
  const gateway = createGateway({ config, logger, providerTypes, ...(options.now ? { now: options.now } : {}) });
  const address = await gateway.listen(0, '127.0.0.1');
  const url = `http://127.0.0.1:${address.port}`;
  return {
    gateway,
    url,
    config,
    logLines,
    close: async () => {
      await gateway.close(100);
      rmSync(stateDirectory, { recursive: true, force: true });
    },
    post: (path, body, headers = {}) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
  };
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export type UpstreamHandler = (request: RecordedRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

/** A real HTTP server on loopback that records what it receives and answers with `handler`. */
export async function startUpstream(handler: UpstreamHandler) {
  const requests: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // keep the raw text
      }
      const recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      void handler(recorded, res, req);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A reply in this contract's own envelope, as LangSearch and searchgate send it. */
export function searchEnvelope(value: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  return { code: 200, log_id: 'upstream-log', msg: null, data: { _type: 'SearchResponse', webPages: { value, ...extra } } };
}

/** Config for one searchgate-compatible upstream serving both operations. */
export function upstreamConfig(baseUrl: string, extra: Record<string, unknown> = {}) {
  return {
    providers: { up: { type: 'searchgate-compatible', baseUrl, apiKey: 'upstream-secret-key', ...extra } },
    search: { chain: ['up'] },
    rerank: { models: { 'service-reranker-v1': { chain: ['up'] } } },
    retry: { retries: 2, minDelayMs: 5, maxDelayMs: 20 },
  };
}
