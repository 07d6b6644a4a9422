/**
 * Where a reranker model comes from: a local directory, or a Hugging Face Hub repository that is
 * downloaded once into a cache directory and read from there ever after.
 *
 * Downloads use the Hub's file URLs (`{hub}/{repo}/resolve/{revision}/{path}`), the same ones
 * huggingface_hub uses, so a mirror set through HF_ENDPOINT works too. Only the files searchgate
 * needs are fetched: the tokenizer, config.json and one ONNX graph (`onnx/model.onnx`, the
 * Xenova/Optimum layout, else `model.onnx`). A repository without a searchgate-model.json gets one
 * generated from its config.json, uncalibrated.
 *
 * A download lands in a temporary directory beside its target and is renamed into place with a
 * `.complete` marker inside, so an interrupted download never looks like a model, and two
 * processes racing on one model both end up with the same complete directory.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { MODEL_SPEC_FILE, ModelDirectoryError, TOKENIZER_FILES, type ModelFamily } from './model.js';

export const DEFAULT_HUB_URL = 'https://huggingface.co';
export const DEFAULT_REVISION = 'main';
export const COMPLETE_MARKER = '.complete';
/** How long a request may wait for its answer, or a body go without a byte, before it is abandoned. */
export const DEFAULT_STALL_TIMEOUT_MS = 30_000;

/** Graph locations tried in order when the repository has no searchgate-model.json naming one. */
const ONNX_CANDIDATES = ['onnx/model.onnx', 'model.onnx'] as const;
const SAVED_ONNX_FILE = 'model.onnx';
/** BERT-family position tables end at 512; longer windows would need a model we do not generate specs for. */
const MAX_GENERATED_TOKENS = 512;
const MAX_REDIRECTS = 10;
const HUB_PREFIX = 'hf:';
/**
 * The Hub's own rule for `namespace/name`, narrowed so that `owner--name` names one cache directory
 * unambiguously (the Hub forbids `--` and `..` inside names as well).
 */
const REPO_ID = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/;

export type ModelSource = { kind: 'directory'; directory: string } | { kind: 'hub'; repoId: string };

export interface ModelSourceOptions {
  /** Downloads go to `<cacheDirectory>/<owner>--<name>/<revision>/`. */
  cacheDirectory: string;
  /** Default: HF_ENDPOINT, else https://huggingface.co. */
  hubUrl?: string;
  /** Branch, tag or commit; default `main`. */
  revision?: string;
  /** Default: HF_TOKEN. Sent to the Hub only, never to the CDN it redirects to, and never logged. */
  token?: string;
  /**
   * Whether a bare `owner/name` that is not an existing path means a Hub repository. Off for the
   * built-in default directory, so a model not fetched yet reports how to fetch it instead of asking
   * the Hub for a repository named after a local folder. `hf:owner/name` always means the Hub.
   */
  bareRepoIds?: boolean;
  stallTimeoutMs?: number;
  fetchImpl?: typeof fetch;
  env?: NodeJS.ProcessEnv;
  /** Called before a download starts, so the operator learns why the start takes a while. */
  onDownload?: (download: { repoId: string; revision: string; directory: string }) => void;
}

/** `~` and `~/…` name the home directory, as in a shell; anything else is returned unchanged. */
export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/** `${SEARCHGATE_CACHE_DIR:-~/.cache/searchgate}/models`, as scripts/fetch-model.sh uses for its own cache. */
export function defaultModelCacheDirectory(env: NodeJS.ProcessEnv = process.env): string {
  const cacheRoot = env.SEARCHGATE_CACHE_DIR ? expandHome(env.SEARCHGATE_CACHE_DIR) : join(homedir(), '.cache', 'searchgate');
  return join(cacheRoot, 'models');
}

export function parseModelSource(model: string, bareRepoIds = true): ModelSource {
  if (model.startsWith(HUB_PREFIX)) {
    const repoId = model.slice(HUB_PREFIX.length);
    if (!isRepoId(repoId)) {
      throw new ModelDirectoryError(`reranker model "${model}" is not a Hugging Face model id; write it as hf:owner/name`);
    }
    return { kind: 'hub', repoId };
  }
  const looksLikePath = /^(~|\.{1,2})(\/|$)/.test(model) || model.startsWith('/');
  if (looksLikePath || existsSync(model) || !bareRepoIds || !isRepoId(model)) {
    return { kind: 'directory', directory: expandHome(model) };
  }
  return { kind: 'hub', repoId: model };
}

function isRepoId(value: string): boolean {
  return REPO_ID.test(value) && !value.includes('--') && !value.includes('..');
}

/** Where `repoId` at `revision` is (or will be) cached. */
export function cachedModelDirectory(cacheDirectory: string, repoId: string, revision: string): string {
  const [owner, name] = repoId.split('/') as [string, string];
  // A revision may be `refs/pr/1`; one path segment per revision keeps the layout flat and readable.
  return join(resolve(expandHome(cacheDirectory)), `${owner}--${name}`, encodeURIComponent(revision));
}

/** Downloads in flight in this process, so two providers naming one model share the download. */
const downloads = new Map<string, Promise<string>>();

/**
 * The local directory `model` names: a local path as given (`~` expanded), or the cache directory
 * of a Hub repository, downloaded first unless a complete copy is already there.
 */
export async function resolveModelSource(model: string, options: ModelSourceOptions): Promise<string> {
  const source = parseModelSource(model, options.bareRepoIds ?? true);
  if (source.kind === 'directory') return source.directory;
  const revision = options.revision ?? DEFAULT_REVISION;
  const directory = cachedModelDirectory(options.cacheDirectory, source.repoId, revision);
  if (existsSync(join(directory, COMPLETE_MARKER))) return directory;
  let download = downloads.get(directory);
  if (!download) {
    download = downloadModel(source.repoId, revision, directory, options).finally(() => downloads.delete(directory));
    downloads.set(directory, download);
  }
  return download;
}

async function downloadModel(repoId: string, revision: string, directory: string, options: ModelSourceOptions): Promise<string> {
  const env = options.env ?? process.env;
  const hub = new HubClient({
    repoId,
    revision,
    hubUrl: (options.hubUrl ?? env.HF_ENDPOINT ?? DEFAULT_HUB_URL).replace(/\/+$/, ''),
    token: options.token ?? env.HF_TOKEN ?? env.HUGGING_FACE_HUB_TOKEN,
    stallTimeoutMs: options.stallTimeoutMs ?? DEFAULT_STALL_TIMEOUT_MS,
    fetchImpl: options.fetchImpl ?? fetch,
  });
  options.onDownload?.({ repoId, revision, directory });
  const parent = dirname(directory);
  let staging: string;
  try {
    await mkdir(parent, { recursive: true });
    staging = await mkdtemp(join(parent, `.${encodeURIComponent(revision)}.download-`));
  } catch (error) {
    throw new ModelDirectoryError(`cannot write to the model cache directory ${parent}: ${(error as Error).message}`);
  }
  try {
    await fetchModelFiles(hub, staging);
    await writeFile(join(staging, COMPLETE_MARKER), `${repoId}@${revision}\n`);
    await moveIntoPlace(staging, directory);
    return directory;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function fetchModelFiles(hub: HubClient, staging: string): Promise<void> {
  const repoSpec = await hub.download(MODEL_SPEC_FILE, join(staging, MODEL_SPEC_FILE), { optional: true });
  for (const file of TOKENIZER_FILES) await hub.download(file, join(staging, file));
  // Only a generated spec needs config.json; a repository that ships its own spec may omit it.
  await hub.download('config.json', join(staging, 'config.json'), { optional: repoSpec });

  if (repoSpec) {
    const file = await specFileName(join(staging, MODEL_SPEC_FILE), hub.label);
    await hub.download(file, join(staging, file));
    return;
  }
  let found = false;
  for (const candidate of ONNX_CANDIDATES) {
    if (await hub.download(candidate, join(staging, SAVED_ONNX_FILE), { optional: true })) {
      found = true;
      break;
    }
  }
  if (!found) {
    throw new ModelDirectoryError(
      `Hugging Face model ${hub.label} has no ONNX graph (tried ${ONNX_CANDIDATES.join(' and ')}); ` +
        'pick a repository with an ONNX export (e.g. a Xenova/ one), or export one with scripts/export_onnx.py and point model at that directory',
    );
  }
  const config = await readJsonObject(join(staging, 'config.json'), `config.json of ${hub.label}`);
  const tokenizerConfig = await readJsonObject(join(staging, 'tokenizer_config.json'), `tokenizer_config.json of ${hub.label}`);
  const spec = generateModelSpec(hub.repoId, hub.revision, config, tokenizerConfig);
  await writeFile(join(staging, MODEL_SPEC_FILE), JSON.stringify(spec, null, 2) + '\n');
}

/** The ONNX file a repository's own spec names; checked so that it cannot write outside the download. */
async function specFileName(specPath: string, label: string): Promise<string> {
  const spec = await readJsonObject(specPath, `${MODEL_SPEC_FILE} of ${label}`);
  const file = spec.file ?? SAVED_ONNX_FILE;
  if (typeof file !== 'string' || file.startsWith('/') || file.split('/').some((part) => part === '..' || part === '')) {
    throw new ModelDirectoryError(`${MODEL_SPEC_FILE} of Hugging Face model ${label}: "file" must be a relative path inside the repository`);
  }
  return file;
}

async function readJsonObject(path: string, what: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new ModelDirectoryError(`${what} is not valid JSON (${(error as Error).message})`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new ModelDirectoryError(`${what} does not hold a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * A searchgate-model.json for a repository that has none, from its config.json: a sequence
 * classifier is a cross-encoder, anything else an encoder whose token states are pooled. Pooling
 * follows the family's training (bge uses the [CLS] state, sentence-transformers models the mean).
 * No calibration: the provider warns until `searchgate calibrate` fits one.
 */
export function generateModelSpec(
  repoId: string,
  revision: string,
  config: Record<string, unknown>,
  tokenizerConfig: Record<string, unknown>,
): Record<string, unknown> {
  const architectures = Array.isArray(config.architectures) ? config.architectures : [];
  const isCrossEncoder = architectures.some((name) => typeof name === 'string' && name.endsWith('ForSequenceClassification'));
  const family: ModelFamily = isCrossEncoder ? 'cross-encoder' : 'bi-encoder';
  let maxTokens = MAX_GENERATED_TOKENS;
  for (const limit of [config.max_position_embeddings, tokenizerConfig.model_max_length]) {
    if (typeof limit === 'number' && Number.isInteger(limit) && limit >= 16) maxTokens = Math.min(maxTokens, limit);
  }
  const spec: Record<string, unknown> = {
    id: repoId,
    source: `hf:${repoId}@${revision}, downloaded from the Hugging Face Hub; spec generated from its config.json`,
    family,
    file: SAVED_ONNX_FILE,
    output: isCrossEncoder ? 'logits' : 'last_hidden_state',
  };
  if (isCrossEncoder) {
    // A two-class classifier's second class is "relevant"; a one-logit model has only index 0.
    spec.logitIndex = labelCount(config) === 2 ? 1 : 0;
  } else {
    spec.pooling = repoId.toLowerCase().includes('bge') ? 'cls' : 'mean';
    spec.normalize = true;
  }
  spec.maxTokens = maxTokens;
  spec.windowOverlapTokens = Math.floor(maxTokens / 4);
  spec.calibration = null;
  return spec;
}

function labelCount(config: Record<string, unknown>): number {
  if (typeof config.num_labels === 'number') return config.num_labels;
  const labels = config.id2label;
  return labels && typeof labels === 'object' ? Object.keys(labels).length : 1;
}

async function moveIntoPlace(staging: string, directory: string): Promise<void> {
  // A leftover without the marker is a copy someone interrupted before this scheme; replace it.
  if (existsSync(directory) && !existsSync(join(directory, COMPLETE_MARKER))) await rm(directory, { recursive: true, force: true });
  try {
    await rename(staging, directory);
  } catch (error) {
    // Another process finished the same download first: its copy is as good as ours.
    if (existsSync(join(directory, COMPLETE_MARKER))) return;
    throw new ModelDirectoryError(`cannot move the downloaded model into ${directory}: ${(error as Error).message}`);
  }
}

interface HubClientOptions {
  repoId: string;
  revision: string;
  hubUrl: string;
  token: string | undefined;
  stallTimeoutMs: number;
  fetchImpl: typeof fetch;
}

class HubClient {
  readonly repoId: string;
  readonly revision: string;
  /** How errors name the model: `owner/name@revision`. */
  readonly label: string;
  private readonly hubOrigin: string;

  constructor(private readonly options: HubClientOptions) {
    this.repoId = options.repoId;
    this.revision = options.revision;
    this.label = `${options.repoId}@${options.revision}`;
    try {
      this.hubOrigin = new URL(options.hubUrl).origin;
    } catch {
      throw new ModelDirectoryError(`the Hugging Face endpoint "${options.hubUrl}" is not a URL; check hubUrl or HF_ENDPOINT`);
    }
  }

  private fileUrl(path: string): string {
    const encodedPath = path.split('/').map(encodeURIComponent).join('/');
    return `${this.options.hubUrl}/${this.repoId}/resolve/${encodeURIComponent(this.revision)}/${encodedPath}`;
  }

  /**
   * Streams one repository file to `target`. With `optional`, a file the repository does not have
   * gives false; every other failure throws a ModelDirectoryError naming the repository and file.
   */
  async download(path: string, target: string, { optional = false }: { optional?: boolean } = {}): Promise<boolean> {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const armStallTimer = () => {
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(), this.options.stallTimeoutMs);
    };
    armStallTimer();
    try {
      const response = await this.follow(this.fileUrl(path), abort.signal);
      if (response.status === 404 && optional && !isWholeRepositoryMissing(response)) {
        await response.body?.cancel();
        return false;
      }
      if (!response.ok || !response.body) {
        await response.body?.cancel();
        throw new ModelDirectoryError(this.describeFailure(path, response));
      }
      await mkdir(dirname(target), { recursive: true });
      let received = 0;
      await pipeline(
        Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            armStallTimer();
            received += chunk.length;
            yield chunk;
          }
        },
        createWriteStream(target),
      );
      // With a content-encoding, fetch has decoded the body and the length no longer applies.
      const expected = response.headers.has('content-encoding') ? Number.NaN : Number(response.headers.get('content-length') ?? Number.NaN);
      if (Number.isFinite(expected) && received !== expected) {
        throw new ModelDirectoryError(`download of ${path} from Hugging Face model ${this.label} was cut short: ${received} of ${expected} bytes`);
      }
      return true;
    } catch (error) {
      if (error instanceof ModelDirectoryError) throw error;
      // A top-level errno error is the disk's (a network failure arrives as fetch's TypeError).
      if ((error as NodeJS.ErrnoException).syscall) throw new ModelDirectoryError(`cannot write ${target}: ${(error as Error).message}`);
      const reason = abort.signal.aborted ? `no progress for ${this.options.stallTimeoutMs / 1000} s` : describeNetworkError(error);
      throw new ModelDirectoryError(
        `cannot download ${path} of Hugging Face model ${this.label} from ${this.options.hubUrl}: ${reason}; ` +
          'the first start needs network access to the Hub (or HF_ENDPOINT), or point model at a local directory',
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Follows redirects by hand: the Hub answers large (LFS) files with a redirect to its CDN, and the
   * token must go to the Hub alone, whatever host a redirect names.
   */
  private async follow(firstUrl: string, signal: AbortSignal): Promise<Response> {
    let url = firstUrl;
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const headers: Record<string, string> = { 'user-agent': 'searchgate' };
      if (this.options.token && new URL(url).origin === this.hubOrigin) headers.authorization = `Bearer ${this.options.token}`;
      const response = await this.options.fetchImpl(url, { headers, redirect: 'manual', signal });
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) return response;
      await response.body?.cancel();
      url = new URL(location, url).toString();
    }
    throw new ModelDirectoryError(`Hugging Face model ${this.label}: more than ${MAX_REDIRECTS} redirects for ${firstUrl}`);
  }

  private describeFailure(path: string, response: Response): string {
    const what = `cannot download ${path} of Hugging Face model ${this.label}: HTTP ${response.status}`;
    const errorCode = response.headers.get('x-error-code');
    const tokenHint = this.options.token
      ? 'the token in HF_TOKEN was refused or cannot read this repository'
      : 'set HF_TOKEN to a token that can read it';
    switch (response.status) {
      case 401:
        // The Hub answers 401 for a missing repository as well as a private one, so as not to reveal which.
        return `${what}; the repository does not exist, or is private or gated: check the id, or ${tokenHint}`;
      case 403:
        return `${what}; access refused (a gated repository needs its terms accepted on the Hub): ${tokenHint}`;
      case 404:
        if (errorCode === 'RepoNotFound') return `${what}; no such repository`;
        if (errorCode === 'RevisionNotFound') return `${what}; no revision "${this.revision}" in the repository`;
        return `${what}; the file is not in the repository at revision ${this.revision}`;
      default:
        return `${what}; the Hub failed, try again later`;
    }
  }
}

function isWholeRepositoryMissing(response: Response): boolean {
  const errorCode = response.headers.get('x-error-code');
  return errorCode === 'RepoNotFound' || errorCode === 'RevisionNotFound';
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
