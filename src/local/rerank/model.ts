/**
 * A reranker model directory: the ONNX graph, the Hugging Face tokenizer files beside it, and
 * `searchgate-model.json`, which says how to run the graph and how to calibrate its outputs.
 * Everything is checked when the directory is opened, so a broken model stops the service at start
 * with a message that names the file, never on the first request.
 */
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
  calibration: Calibration | null;
}

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
  const maxTokens = integer('maxTokens', 512, 16);
  const windowOverlapTokens = integer('windowOverlapTokens', Math.floor(maxTokens / 4), 0);
  if (windowOverlapTokens >= maxTokens / 2) fail('"windowOverlapTokens" must be less than half of "maxTokens"');
  let calibration: Calibration | null = null;
  if (value.calibration !== undefined && value.calibration !== null) {
    const problem = checkCalibration(value.calibration);
    if (problem) fail(`"calibration" ${problem}`);
    calibration = value.calibration as Calibration;
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
    calibration,
  };
}
