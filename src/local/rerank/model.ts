/**
 * A reranker model directory: the ONNX graph, the Hugging Face tokenizer files beside it, and
 * `searchgate-model.json`, which says how to run the graph and how to calibrate its outputs.
 * Everything is checked when the directory is opened, so a broken model stops the service at start
 * with a message that names the file, never on the first request.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Calibration } from './calibration.js';
import { checkCalibration } from './calibration.js';

export type ModelFamily = 'cross-encoder' | 'bi-encoder';

export interface RerankModelSpec {
  id: string;
  family: ModelFamily;
  /** The ONNX file, relative to the directory. */
  file: string;
  /** Output name: `logits` for cross-encoders, `last_hidden_state` (or a pooled output) for bi-encoders. */
  output: string;
  /** Bi-encoders only: how token states become one vector. */
  pooling: 'mean' | 'cls';
  normalize: boolean;
  /** The most tokens one sequence may hold, special tokens included. */
  maxTokens: number;
  /** Tokens shared by neighbouring windows of a long document. */
  windowOverlapTokens: number;
  /** Some bi-encoders (bge, e5) expect an instruction before the query. */
  queryPrefix: string;
  documentPrefix: string;
  /** Cross-encoders with two output classes: which one means "relevant". */
  logitIndex: number;
  /** Raw score = model score + lexicalWeight × the in-request BM25 score; fitted by `searchgate calibrate`. */
  lexicalWeight: number;
  /**
   * `dynamic-int8`: the graph quantizes each activation on the fly with one scale for the whole
   * input tensor, so a sequence's vector would depend on the sequences and padding it is batched
   * with; such a graph runs one sequence per batch (deterministic, and as fast per token on a CPU).
   * `none` (default): sequences are batched up to the engine's maxBatchTokens.
   */
  quantization: 'none' | 'dynamic-int8';
  calibration: Calibration | null;
  /**
   * Bi-encoders: the local index's hybrid scorer for this model (src/local/index/hybrid.ts), fitted by
   * `searchgate calibrate --retrieval`; null until then (the index uses its default weights).
   */
  retrieval: RetrievalWeights | null;
}

/** Coefficients of the hybrid scorer: relevance = sigmoid(intercept + Σ weight × feature). */
export interface RetrievalWeights {
  intercept: number;
  cosine: number;
  lexical: number;
  titleCoverage: number;
  exactTitle: number;
  bm25Rank: number;
  vectorRank: number;
  fullTextScore: number;
  titleCosine: number;
}

/** The scorer's features, each with a weight of its name (src/local/index/hybrid.ts computes them). */
export const RETRIEVAL_FEATURES = ['cosine', 'lexical', 'titleCoverage', 'exactTitle', 'bm25Rank', 'vectorRank', 'fullTextScore', 'titleCosine'] as const satisfies ReadonlyArray<
  Exclude<keyof RetrievalWeights, 'intercept'>
>;

export const RETRIEVAL_WEIGHT_KEYS = ['intercept', ...RETRIEVAL_FEATURES] as const;

/**
 * Features added after weights were first fitted: a spec fitted before one of them lacks its weight,
 * which then counts as 0, so that spec scores as it did when it was fitted.
 */
const LATER_RETRIEVAL_FEATURES: ReadonlySet<string> = new Set(['fullTextScore', 'titleCosine']);

export const MODEL_SPEC_FILE = 'searchgate-model.json';
export const TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json'] as const;

export class ModelDirectoryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelDirectoryError';
  }
}

const FETCH_HINT = 'run `npm run fetch-model` for the default model, or see "Reranker models" in README.md';

/** Reads and checks a model directory; throws ModelDirectoryError naming what is wrong. */
export function readModelDirectory(directory: string): { directory: string; spec: RerankModelSpec } {
  const root = resolve(directory);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new ModelDirectoryError(`reranker model directory ${root} does not exist; ${FETCH_HINT}`);
  }
  const specPath = join(root, MODEL_SPEC_FILE);
  const raw = readJson(specPath, `${FETCH_HINT}; a directory of your own needs one (docs/reranker-models.md), and \`hf:<repo id>\` writes one itself`);
  const spec = parseSpec(raw, specPath);
  for (const file of [spec.file, ...TOKENIZER_FILES]) {
    const path = join(root, file);
    if (!existsSync(path)) throw new ModelDirectoryError(`reranker model file ${path} is missing; ${FETCH_HINT}`);
  }
  for (const file of TOKENIZER_FILES) readJson(join(root, file), FETCH_HINT);
  return { directory: root, spec };
}

/**
 * Names the model and the way it cuts and embeds a document: two specs with the same stamp give the
 * same window vectors for the same text, so vectors of one stamp can be reused and compared. It
 * covers the spec's id and graph file (the fetch script names the int8 and fp32 graphs apart) and
 * every key that changes a document's windows; not the calibration or lexical weight, which act on
 * scores only.
 */
export function modelStamp(spec: RerankModelSpec): string {
  const keys = [spec.id, spec.file, spec.quantization, spec.family, spec.output, spec.pooling, spec.normalize, spec.maxTokens, spec.windowOverlapTokens, spec.documentPrefix];
  return `${spec.id}:${createHash('sha256').update(JSON.stringify(keys)).digest('hex').slice(0, 16)}`;
}

function readJson(path: string, hint: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new ModelDirectoryError(`reranker model file ${path} cannot be read; ${hint}`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ModelDirectoryError(`reranker model file ${path} is not valid JSON (${(error as Error).message})`);
  }
}

function parseSpec(raw: unknown, path: string): RerankModelSpec {
  const fail = (problem: string): never => {
    throw new ModelDirectoryError(`reranker model file ${path}: ${problem}`);
  };
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) fail('must hold a JSON object');
  const value = raw as Record<string, unknown>;
  const family = value.family;
  if (family !== 'cross-encoder' && family !== 'bi-encoder') fail('"family" must be "cross-encoder" or "bi-encoder"');
  const text = (key: string, fallback: string): string => {
    const item = value[key] ?? fallback;
    if (typeof item !== 'string') fail(`"${key}" must be a string`);
    return item as string;
  };
  const integer = (key: string, fallback: number, minimum: number): number => {
    const item = value[key] ?? fallback;
    if (typeof item !== 'number' || !Number.isInteger(item) || item < minimum) fail(`"${key}" must be an integer ≥ ${minimum}`);
    return item as number;
  };
  const pooling = value.pooling ?? 'mean';
  if (pooling !== 'mean' && pooling !== 'cls') fail('"pooling" must be "mean" or "cls"');
  const lexicalWeight = value.lexicalWeight ?? 0;
  if (typeof lexicalWeight !== 'number' || !Number.isFinite(lexicalWeight) || lexicalWeight < 0) {
    fail('"lexicalWeight" must be a number ≥ 0');
  }
  const quantization = value.quantization ?? 'none';
  if (quantization !== 'none' && quantization !== 'dynamic-int8') fail('"quantization" must be "none" or "dynamic-int8"');
  const maxTokens = integer('maxTokens', 512, 16);
  const windowOverlapTokens = integer('windowOverlapTokens', Math.floor(maxTokens / 4), 0);
  if (windowOverlapTokens >= maxTokens / 2) fail('"windowOverlapTokens" must be less than half of "maxTokens"');
  let calibration: Calibration | null = null;
  if (value.calibration !== undefined && value.calibration !== null) {
    const problem = checkCalibration(value.calibration);
    if (problem) fail(`"calibration" ${problem}`);
    calibration = value.calibration as Calibration;
  }
  let retrieval: RetrievalWeights | null = null;
  if (value.retrieval !== undefined && value.retrieval !== null) {
    const weights = value.retrieval as Record<string, unknown>;
    if (typeof weights !== 'object' || Array.isArray(weights)) fail('"retrieval" must be an object of weights');
    const weightOf = (key: string) => (weights[key] === undefined && LATER_RETRIEVAL_FEATURES.has(key) ? 0 : weights[key]);
    for (const key of RETRIEVAL_WEIGHT_KEYS) {
      const weight = weightOf(key);
      if (typeof weight !== 'number' || !Number.isFinite(weight)) fail(`"retrieval.${key}" must be a finite number`);
    }
    retrieval = Object.fromEntries(RETRIEVAL_WEIGHT_KEYS.map((key) => [key, weightOf(key) as number])) as unknown as RetrievalWeights;
  }
  return {
    id: text('id', 'model'),
    family: family as ModelFamily,
    file: text('file', 'model.onnx'),
    output: text('output', family === 'cross-encoder' ? 'logits' : 'last_hidden_state'),
    pooling: pooling as 'mean' | 'cls',
    normalize: value.normalize === undefined ? true : value.normalize === true,
    maxTokens,
    windowOverlapTokens,
    queryPrefix: text('queryPrefix', ''),
    documentPrefix: text('documentPrefix', ''),
    logitIndex: integer('logitIndex', 0, 0),
    lexicalWeight: lexicalWeight as number,
    quantization: quantization as RerankModelSpec['quantization'],
    calibration,
    retrieval,
  };
}
