/**
 * Models from the Hugging Face Hub, against a loopback server that answers the Hub's file URLs
 * (`/{repo}/resolve/{revision}/{path}`) the way the Hub does: small files directly, the ONNX graph
 * (an LFS file) through a 302 to a CDN URL, 404 with X-Error-Code EntryNotFound for a missing file
 * and 401 for a repository it will not show. The real Hub is never contacted.
 */
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import test from 'ava';
import { resolveConfig } from '../../../src/config/load.js';
import { cachedModelDirectory, COMPLETE_MARKER, parseModelSource, resolveModelSource } from '../../../src/local/rerank/hub.js';
import { InferenceSession } from '../../../src/local/rerank/inference.js';
import { MODEL_SPEC_FILE, ModelDirectoryError, readModelDirectory } from '../../../src/local/rerank/model.js';
import { createLocalRerank } from '../../../src/providers/local/rerank.js';
import { createLogger } from '../../../src/server/logger.js';
import { TEST_MODEL_DIRECTORY } from '../../helpers/gateway.js';

const QUERY = 'what is the capital of france';
const PARIS = 'Paris is the capital and largest city of France.';
const BANANAS = 'Bananas are rich in potassium.';
const REPO = 'sentence-transformers/all-MiniLM-L6-v2';

/** What the fake Hub serves for one path of a repository. */
type HubFile =
  | { kind: 'file'; path: string }
  | { kind: 'json'; value: unknown }
  | { kind: 'bytes'; value: Buffer }
  /**
   * An LFS file: a 302 to a CDN URL, which serves the bytes. Without `cdn` the Hub serves it itself
   * behind a relative Location; with one, the Location is absolute, at the CDN's origin.
   */
  | { kind: 'lfs'; path: string; cdn?: FakeHub };

interface RecordedRequest {
  url: string;
  authorization: string | undefined;
}

interface FakeServer {
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

async function listen(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((request, response) => {
    requests.push({ url: request.url ?? '', authorization: request.headers.authorization });
    handler(request, response);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

function sendFile(response: ServerResponse, path: string): void {
  response.setHeader('content-type', 'application/octet-stream');
  response.setHeader('content-length', String(statSync(path).size));
  createReadStream(path).pipe(response);
}

/**
 * A Hub holding `repos` (repo id → path → file) at revision main. `lockedRepos` answer 401 unless
 * the request carries `Bearer <token>`, as a private or gated repository does.
 */
interface FakeHub extends FakeServer {
  /** CDN path → file this server serves as a blob. */
  blobs: Map<string, string>;
}

let nextBlob = 0;

async function startFakeHub(repos: Record<string, Record<string, HubFile>>, lockedRepos: Record<string, string> = {}): Promise<FakeHub> {
  const blobs = new Map<string, string>();
  const server = await listen((request, response) => {
    const url = new URL(request.url ?? '/', 'http://hub');
    const blob = blobs.get(url.pathname);
    if (blob) return sendFile(response, blob);
    const match = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const repoId = match?.[1];
    const repo = repoId ? repos[repoId] : undefined;
    const requiredToken = repoId ? lockedRepos[repoId] : undefined;
    if (!match || !repo || (requiredToken && request.headers.authorization !== `Bearer ${requiredToken}`)) {
      response.statusCode = 401;
      response.setHeader('x-error-code', 'RepoNotFound');
      return response.end('Invalid username or password.');
    }
    if (decodeURIComponent(match[2]!) !== 'main') {
      response.statusCode = 404;
      response.setHeader('x-error-code', 'RevisionNotFound');
      return response.end('Invalid rev id');
    }
    const file = repo[decodeURIComponent(match[3]!)];
    if (!file) {
      response.statusCode = 404;
      response.setHeader('x-error-code', 'EntryNotFound');
      return response.end('Entry not found');
    }
    switch (file.kind) {
      case 'file':
        return sendFile(response, file.path);
      case 'json':
        response.setHeader('content-type', 'application/json');
        return response.end(JSON.stringify(file.value));
      case 'bytes':
        return response.end(file.value);
      case 'lfs': {
        const blobPath = `/cdn-lfs/blob-${nextBlob++}`;
        (file.cdn ?? hub).blobs.set(blobPath, file.path);
        response.statusCode = 302;
        response.setHeader('location', `${file.cdn ? file.cdn.origin : ''}${blobPath}?expires=3600&signature=abc`);
        return response.end();
      }
    }
  });
  const hub: FakeHub = Object.assign(server, { blobs });
  return hub;
}

const realModelFile = (name: string): HubFile => ({ kind: 'file', path: join(TEST_MODEL_DIRECTORY, name) });
/** The real graph the Hub serves as its model.onnx (the default directory's is model_int8.onnx). */
const REAL_GRAPH = join(TEST_MODEL_DIRECTORY, readModelDirectory(TEST_MODEL_DIRECTORY).spec.file);

/** The real model laid out as a Xenova-style repository: the graph under onnx/, stored in LFS. */
function realModelRepo(): Record<string, HubFile> {
  return {
    'tokenizer.json': realModelFile('tokenizer.json'),
    'tokenizer_config.json': realModelFile('tokenizer_config.json'),
    'config.json': realModelFile('config.json'),
    'onnx/model.onnx': { kind: 'lfs', path: REAL_GRAPH },
  };
}

/** A repository whose files only need to download, not to run. */
function smallRepo(overrides: Record<string, HubFile | undefined> = {}): Record<string, HubFile> {
  const files: Record<string, HubFile | undefined> = {
    'tokenizer.json': realModelFile('tokenizer.json'),
    'tokenizer_config.json': { kind: 'json', value: { model_max_length: 512 } },
    'config.json': { kind: 'json', value: { architectures: ['BertModel'], max_position_embeddings: 512 } },
    'onnx/model.onnx': { kind: 'bytes', value: Buffer.from('not really onnx') },
    ...overrides,
  };
  return Object.fromEntries(Object.entries(files).filter((entry): entry is [string, HubFile] => entry[1] !== undefined));
}

const temporaryCaches: string[] = [];

function temporaryCache(): string {
  const directory = mkdtempSync(join(tmpdir(), 'searchgate-hub-'));
  temporaryCaches.push(directory);
  return directory;
}

/** Everything under the cache's repository folders: no download may leave a staging directory behind. */
function cacheEntries(cacheDirectory: string): string[] {
  if (!existsSync(cacheDirectory)) return [];
  return readdirSync(cacheDirectory).flatMap((repo) => readdirSync(join(cacheDirectory, repo)).map((entry) => `${repo}/${entry}`));
}

/** The first download of the real model, shared by the tests that need a loadable result. */
let realHub: FakeHub;
let realCache: string;
let realDownload: Promise<string>;
test.before(async () => {
  realHub = await startFakeHub({ [REPO]: realModelRepo() });
  realCache = temporaryCache();
  realDownload = resolveModelSource(`hf:${REPO}`, { cacheDirectory: realCache, hubUrl: realHub.origin, env: {} });
});
test.after.always(async () => {
  await realHub?.close();
  await Promise.all(temporaryCaches.map((directory) => rm(directory, { recursive: true, force: true })));
});

test('a Hub model downloads once into the cache, through the CDN redirect, with a generated bi-encoder spec', async (t) => {
  const directory = await realDownload;
  t.is(directory, join(realCache, 'sentence-transformers--all-MiniLM-L6-v2', 'main'));
  t.true(existsSync(join(directory, COMPLETE_MARKER)));
  t.deepEqual(cacheEntries(realCache), ['sentence-transformers--all-MiniLM-L6-v2/main'], 'no staging directory is left behind');
  t.true(
    readFileSync(join(directory, 'model.onnx')).equals(readFileSync(REAL_GRAPH)),
    'the graph is saved as model.onnx, byte for byte',
  );
  const paths = realHub.requests.map((request) => request.url.split('?')[0]);
  t.true(paths.includes(`/${REPO}/resolve/main/onnx/model.onnx`));
  t.true(paths.some((path) => path?.startsWith('/cdn-lfs/')), 'the 302 to the CDN was followed');
  t.false(paths.includes(`/${REPO}/resolve/main/model.onnx`), 'the Xenova layout is found first');

  const spec = JSON.parse(readFileSync(join(directory, MODEL_SPEC_FILE), 'utf8'));
  t.like(spec, { id: REPO, family: 'bi-encoder', file: 'model.onnx', output: 'last_hidden_state', pooling: 'mean', maxTokens: 512, calibration: null });

  const { spec: checked } = readModelDirectory(directory);
  const session = await InferenceSession.open(directory, checked, { threads: 1, maxBatchTokens: 8192, memoryArena: false });
  t.teardown(() => session.close());
  const [scores] = await session.score([{ query: QUERY, documents: [PARIS, BANANAS] }]);
  const [paris, bananas] = scores!.semantic;
  t.true(paris! > bananas!, `Paris ${paris}, bananas ${bananas}`);
});

test('a second resolve of a downloaded model asks the network nothing', async (t) => {
  const first = await realDownload;
  const before = realHub.requests.length;
  const failingFetch: typeof fetch = async () => {
    throw new Error('the network must not be used');
  };
  const second = await resolveModelSource(REPO, { cacheDirectory: realCache, hubUrl: realHub.origin, fetchImpl: failingFetch, env: {} });
  t.is(second, first);
  t.is(realHub.requests.length, before);
});

test('the local-reranker provider resolves an hf: model through its cache and serves rerank from it', async (t) => {
  await realDownload;
  const before = realHub.requests.length;
  const logLines: string[] = [];
  const provider = createLocalRerank('local-reranker', {
    model: `hf:${REPO}`,
    cacheDirectory: realCache,
    hubUrl: realHub.origin,
    optional: false,
    threads: 1,
    maxDocumentCharacters: 20_000,
    maxBatchTokens: 8192,
    embeddingCacheBytes: 0,
    maxDispatchDocuments: 64,
    maxQueuedDocuments: 4096,
    maxDocuments: 1000,
  });
  await provider.start!(createLogger('info', (line) => logLines.push(line)));
  t.teardown(() => provider.close!());
  t.is(realHub.requests.length, before, 'the cached copy is used');
  const { scores: [paris, bananas] } = await provider.rerank({ model: 'x', query: QUERY, documents: [PARIS, BANANAS], signal: new AbortController().signal });
  t.true(paris! > bananas!);
  t.true(
    logLines.some((line) => line.includes('no calibration') && line.includes('searchgate calibrate')),
    'an uncalibrated download is reported',
  );
});

test('the graph at the repository root is found when onnx/model.onnx is absent; an absolute CDN redirect gets no token', async (t) => {
  const cdn = await startFakeHub({});
  const graph = join(TEST_MODEL_DIRECTORY, 'tokenizer_config.json'); // any bytes will do: nothing runs it
  const hub = await startFakeHub(
    { 'acme/private-model': smallRepo({ 'onnx/model.onnx': undefined, 'model.onnx': { kind: 'lfs', path: graph, cdn } }) },
    { 'acme/private-model': 'hf_secret_token' },
  );
  t.teardown(async () => {
    await hub.close();
    await cdn.close();
  });
  const cache = temporaryCache();
  // The endpoint and token come from the environment, as huggingface_hub reads them.
  const directory = await resolveModelSource('acme/private-model', {
    cacheDirectory: cache,
    env: { HF_ENDPOINT: hub.origin, HF_TOKEN: 'hf_secret_token' },
  });
  t.true(readFileSync(join(directory, 'model.onnx')).equals(readFileSync(graph)));
  for (const request of hub.requests) t.is(request.authorization, 'Bearer hf_secret_token', request.url);
  t.true(cdn.requests.length > 0, 'the absolute redirect went to the CDN');
  for (const request of cdn.requests) t.is(request.authorization, undefined, 'the token never leaves the Hub');
  t.true(hub.requests.some((request) => request.url === '/acme/private-model/resolve/main/onnx/model.onnx'));
});

test('no ONNX graph in either place is a clear error, and nothing is left in the cache', async (t) => {
  const hub = await startFakeHub({ 'acme/pytorch-only': smallRepo({ 'onnx/model.onnx': undefined }) });
  t.teardown(() => hub.close());
  const cache = temporaryCache();
  const error = await t.throwsAsync(resolveModelSource('hf:acme/pytorch-only', { cacheDirectory: cache, hubUrl: hub.origin, env: {} }), {
    instanceOf: ModelDirectoryError,
  });
  t.regex(error!.message, /acme\/pytorch-only@main has no ONNX graph \(tried onnx\/model\.onnx and model\.onnx\)/);
  t.regex(error!.message, /export_onnx\.py/);
  t.deepEqual(cacheEntries(cache), []);
});

test('a missing required file names the repository, the file and the status', async (t) => {
  const hub = await startFakeHub({ 'acme/no-tokenizer': smallRepo({ 'tokenizer.json': undefined }) });
  t.teardown(() => hub.close());
  const error = await t.throwsAsync(
    resolveModelSource('hf:acme/no-tokenizer', { cacheDirectory: temporaryCache(), hubUrl: hub.origin, env: {} }),
    { instanceOf: ModelDirectoryError },
  );
  t.regex(error!.message, /tokenizer\.json of Hugging Face model acme\/no-tokenizer@main: HTTP 404; the file is not in the repository/);
});

test('401 from the Hub (private, gated or no such repository) points at HF_TOKEN; a refused token says so', async (t) => {
  const hub = await startFakeHub({ 'acme/private-model': smallRepo() }, { 'acme/private-model': 'hf_right_token' });
  t.teardown(() => hub.close());
  const withoutToken = await t.throwsAsync(
    resolveModelSource('hf:acme/private-model', { cacheDirectory: temporaryCache(), hubUrl: hub.origin, env: {} }),
    { instanceOf: ModelDirectoryError },
  );
  t.regex(withoutToken!.message, /acme\/private-model@main: HTTP 401/);
  t.regex(withoutToken!.message, /set HF_TOKEN/);
  const wrongToken = await t.throwsAsync(
    resolveModelSource('hf:acme/private-model', { cacheDirectory: temporaryCache(), hubUrl: hub.origin, token: 'hf_wrong_token', env: {} }),
    { instanceOf: ModelDirectoryError },
  );
  t.regex(wrongToken!.message, /HF_TOKEN was refused/);
  t.false(wrongToken!.message.includes('hf_wrong_token'), 'the token never appears in a message');
});

test('an unknown revision is reported as such and cached under its own folder name', async (t) => {
  const hub = await startFakeHub({ 'acme/model': smallRepo() });
  t.teardown(() => hub.close());
  const error = await t.throwsAsync(
    resolveModelSource('hf:acme/model', { cacheDirectory: temporaryCache(), hubUrl: hub.origin, revision: 'refs/pr/1', env: {} }),
    { instanceOf: ModelDirectoryError },
  );
  t.regex(error!.message, /acme\/model@refs\/pr\/1: HTTP 404; no revision "refs\/pr\/1"/);
  t.true(hub.requests.some((request) => request.url.startsWith('/acme/model/resolve/refs%2Fpr%2F1/')));
  t.is(cachedModelDirectory('/cache', 'acme/model', 'refs/pr/1'), resolve('/cache/acme--model/refs%2Fpr%2F1'));
});

test('a sequence classifier gets a cross-encoder spec; the smaller tokenizer limit wins', async (t) => {
  const hub = await startFakeHub({
    'cross-encoder/ms-marco-MiniLM-L-6-v2': smallRepo({
      'config.json': {
        kind: 'json',
        value: { architectures: ['BertForSequenceClassification'], max_position_embeddings: 512, id2label: { '0': 'LABEL_0' } },
      },
      'tokenizer_config.json': { kind: 'json', value: { model_max_length: 256 } },
    }),
  });
  t.teardown(() => hub.close());
  const directory = await resolveModelSource('hf:cross-encoder/ms-marco-MiniLM-L-6-v2', {
    cacheDirectory: temporaryCache(),
    hubUrl: hub.origin,
    env: {},
  });
  const spec = JSON.parse(readFileSync(join(directory, MODEL_SPEC_FILE), 'utf8'));
  t.like(spec, { family: 'cross-encoder', output: 'logits', logitIndex: 0, maxTokens: 256, windowOverlapTokens: 64, calibration: null });
  t.false('pooling' in spec);
  t.is(readModelDirectory(directory).spec.family, 'cross-encoder', 'the generated spec passes the model check');
});

test('a bge model pools the [CLS] state; a two-class classifier scores its second class', async (t) => {
  const hub = await startFakeHub({
    'BAAI/bge-small-en-v1.5': smallRepo(),
    'acme/two-class-reranker': smallRepo({
      'config.json': { kind: 'json', value: { architectures: ['XLMRobertaForSequenceClassification'], max_position_embeddings: 514, num_labels: 2 } },
    }),
  });
  t.teardown(() => hub.close());
  const cache = temporaryCache();
  const bge = await resolveModelSource('hf:BAAI/bge-small-en-v1.5', { cacheDirectory: cache, hubUrl: hub.origin, env: {} });
  t.like(JSON.parse(readFileSync(join(bge, MODEL_SPEC_FILE), 'utf8')), { family: 'bi-encoder', pooling: 'cls' });
  const twoClass = await resolveModelSource('hf:acme/two-class-reranker', { cacheDirectory: cache, hubUrl: hub.origin, env: {} });
  t.like(JSON.parse(readFileSync(join(twoClass, MODEL_SPEC_FILE), 'utf8')), { family: 'cross-encoder', logitIndex: 1, maxTokens: 512 });
});

test('a repository with its own searchgate-model.json keeps it and downloads the graph it names', async (t) => {
  const ownSpec = { id: 'acme/ready', family: 'cross-encoder', file: 'onnx/model_quantized.onnx', maxTokens: 384, calibration: null };
  const hub = await startFakeHub({
    'acme/ready': smallRepo({
      [MODEL_SPEC_FILE]: { kind: 'json', value: ownSpec },
      'config.json': undefined,
      'onnx/model.onnx': undefined,
      'onnx/model_quantized.onnx': { kind: 'bytes', value: Buffer.from('quantized') },
    }),
  });
  t.teardown(() => hub.close());
  const directory = await resolveModelSource('hf:acme/ready', { cacheDirectory: temporaryCache(), hubUrl: hub.origin, env: {} });
  t.deepEqual(JSON.parse(readFileSync(join(directory, MODEL_SPEC_FILE), 'utf8')), ownSpec);
  t.is(readFileSync(join(directory, 'onnx/model_quantized.onnx'), 'utf8'), 'quantized');
  t.false(existsSync(join(directory, 'model.onnx')));
});

test('a Hub that stops answering times out with a message that says what to do', async (t) => {
  const silent = await listen(() => undefined);
  t.teardown(() => silent.close());
  const error = await t.throwsAsync(
    resolveModelSource('hf:acme/slow', { cacheDirectory: temporaryCache(), hubUrl: silent.origin, stallTimeoutMs: 200, env: {} }),
    { instanceOf: ModelDirectoryError },
  );
  t.regex(error!.message, /acme\/slow@main from http:\/\/127\.0\.0\.1:\d+: no progress for 0\.2 s/);
  t.regex(error!.message, /local directory/);
});

test('a local path is returned as it is; only hf: reaches the Hub when bare ids are off', (t) => {
  const existing = resolve(TEST_MODEL_DIRECTORY);
  t.deepEqual(parseModelSource(existing), { kind: 'directory', directory: existing });
  t.deepEqual(parseModelSource(TEST_MODEL_DIRECTORY), { kind: 'directory', directory: TEST_MODEL_DIRECTORY }, 'an existing owner/name-shaped path');
  t.deepEqual(parseModelSource('./acme/model'), { kind: 'directory', directory: './acme/model' });
  t.deepEqual(parseModelSource('../acme/model'), { kind: 'directory', directory: '../acme/model' });
  t.deepEqual(parseModelSource('/no/such/model'), { kind: 'directory', directory: '/no/such/model' });
  t.deepEqual(parseModelSource('acme/model'), { kind: 'hub', repoId: 'acme/model' });
  t.deepEqual(parseModelSource('acme/model', false), { kind: 'directory', directory: 'acme/model' });
  t.deepEqual(parseModelSource('hf:acme/model', false), { kind: 'hub', repoId: 'acme/model' });
  t.deepEqual(parseModelSource('a/b/c'), { kind: 'directory', directory: 'a/b/c' }, 'not a repository id');
  t.throws(() => parseModelSource('hf:not an id'), { instanceOf: ModelDirectoryError, message: /hf:owner\/name/ });
});

test('resolveModelSource returns a local directory unchanged without touching the network', async (t) => {
  const failingFetch: typeof fetch = async () => {
    throw new Error('the network must not be used');
  };
  for (const model of [TEST_MODEL_DIRECTORY, resolve(TEST_MODEL_DIRECTORY), './models/nothing-here']) {
    t.is(await resolveModelSource(model, { cacheDirectory: temporaryCache(), fetchImpl: failingFetch }), model);
  }
});

test('the provider options accept the Hub settings and reject a hubUrl that is not http(s)', (t) => {
  const config = (options: Record<string, unknown>) => ({ providers: { 'local-reranker': { type: 'local-reranker', ...options } } });
  const resolved = resolveConfig(config({ model: 'hf:acme/model', cacheDirectory: '/var/cache/models', hubUrl: 'https://hf-mirror.example' }), {});
  t.like(resolved.providers['local-reranker'], { model: 'hf:acme/model', revision: 'main', cacheDirectory: '/var/cache/models' });
  t.throws(() => resolveConfig(config({ hubUrl: 'ftp://hub.example' }), {}), { message: /hubUrl/ });
});
