/**
 * `searchgate calibrate`: fits a reranker model's lexical weight and score calibration on a labelled
 * collection in BEIR's format, and writes them into the model's searchgate-model.json (or another
 * spec file), keeping every other key.
 *
 * The lexical weight is the one with the best nDCG@10 over the queries; the calibration maps the
 * raw score at that weight to a probability of relevance. Candidates are a query's top BM25 hits
 * from a local index of the corpus, so the non-relevant pairs are the hard ones a search returns.
 * Candidate depth sets the share of relevant pairs the fit sees, and with it the probabilities: fit
 * at about the depth the service reranks.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkCalibration } from '../local/rerank/calibration.js';
import { NeuralReranker } from '../local/rerank/engine.js';
import { MODEL_SPEC_FILE, ModelDirectoryError, readModelDirectory } from '../local/rerank/model.js';
import type { ModelFamily } from '../local/rerank/model.js';
import { calibrateRetrieval, parseRetrievalOptions, RETRIEVAL_USAGE } from './calibrate-retrieval.js';
import { EXIT_USAGE, UsageError, integerOption, isUsageError, usageFailure } from './args.js';
import { collectionFlags, readJsonLines, readQrels } from './beir.js';
import type { BeirDocument, BeirQuery } from './beir.js';
import {
  fitAndMeasure,
  formatReliabilityTable,
  judgedQueries,
  labelledPairs,
  meanNdcg,
  RELIABILITY_GOAL,
  scoreBm25Candidates,
  standardDeviation,
  sweepLexicalWeights,
} from './rerank-evaluation.js';
import type { CalibrationMethod, MethodReport, ScoredQuery } from './rerank-evaluation.js';

/** Weights for a bi-encoder's cosine; tuned on SciFact, where 0.04 gave the best nDCG@10. */
const DEFAULT_LEXICAL_WEIGHTS = [0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1];
/**
 * Standard deviation of all-MiniLM-L6-v2's cosine over SciFact's BM25 top-20 to top-100 candidates
 * (0.135–0.148). A cross-encoder's logits spread several times wider, so its default grid is the
 * cosine grid stretched by the ratio of the spreads: the same weights relative to the model's scale.
 */
const REFERENCE_COSINE_SPREAD = 0.14;
const DEFAULT_CANDIDATES = 100;
/**
 * Document embeddings kept while scoring: a collection's documents recur across its queries, and a
 * bi-encoder then embeds each once (SciFact's 5,183 abstracts take about 16 MB).
 */
export const EVALUATION_CACHE_BYTES = 1024 * 1024 * 1024;

const USAGE = `usage: searchgate calibrate --model DIR --corpus FILE --queries FILE --qrels FILE [options]

Fits a reranker model's lexical weight and score calibration on a labelled collection in BEIR's
format and writes them into the model's ${MODEL_SPEC_FILE}, keeping its other keys.

options:
  --model DIR               the model directory
  --corpus FILE             BEIR corpus.jsonl: {_id, title, text} per line
  --queries FILE            BEIR queries .jsonl: {_id, text} per line
  --qrels FILE              BEIR qrels .tsv with a header line; only judged queries are used
  --candidates N            BM25 candidates per query, from a local index of the corpus (default ${DEFAULT_CANDIDATES});
                            unjudged candidates count as not relevant. Fewer candidates means a higher
                            share of relevant pairs, and so higher probabilities: match the depth you rerank
  --max-queries N           use only the first N judged queries (a bi-encoder embeds each distinct
                            document once; a cross-encoder runs every pair)
  --method platt|isotonic   the calibration to write (default platt); both are measured
  --lexical-weights LIST    weights of the in-request BM25 score to try, comma-separated; the best nDCG@10
                            is kept (default ${DEFAULT_LEXICAL_WEIGHTS.join(',')} for a bi-encoder's cosine; for a
                            cross-encoder, those multiplied by the spread of its scores / ${REFERENCE_COSINE_SPREAD}). The
                            lexical score grows with query length, so a weight fitted on long queries
                            lowers short ones' probabilities (docs/benchmarks.md, "Embedded reranker")
  --out FILE                the spec file to rewrite (default: DIR/${MODEL_SPEC_FILE})

searchgate calibrate --retrieval … fits the local index's hybrid scorer instead (--retrieval --help).`;

export async function main(argv: string[]): Promise<number> {
  try {
    if (argv.includes('--retrieval')) return await calibrateRetrievalCommand(argv);
    return await calibrateCommand(argv);
  } catch (error) {
    const message = (error as Error).message ?? String(error);
    if (isUsageError(error)) return usageFailure('searchgate calibrate', message, USAGE);
    if (error instanceof ModelDirectoryError) {
      process.stderr.write(`searchgate calibrate: ${message}\n`);
      return EXIT_USAGE;
    }
    process.stderr.write(`searchgate calibrate: ${message}\n`);
    return 1;
  }
}

async function calibrateRetrievalCommand(argv: string[]): Promise<number> {
  const options = parseRetrievalOptions(argv);
  if (options === 'help') {
    process.stdout.write(`${RETRIEVAL_USAGE}\n`);
    return 0;
  }
  process.stdout.write(await calibrateRetrieval(options, (line) => process.stderr.write(`${line}\n`)));
  return 0;
}

interface CalibrateOptions {
  modelDirectory: string;
  corpus: string;
  queries: string;
  qrels: string;
  candidates: number;
  maxQueries: number | undefined;
  method: CalibrationMethod;
  lexicalWeights: number[] | undefined;
  out: string;
}

function parseOptions(argv: string[]): CalibrateOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      model: { type: 'string' },
      corpus: { type: 'string' },
      queries: { type: 'string' },
      qrels: { type: 'string' },
      candidates: { type: 'string' },
      'max-queries': { type: 'string' },
      method: { type: 'string' },
      'lexical-weights': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const { modelDirectory, out, ...files } = collectionFlags(values, positionals);
  const method = values.method ?? 'platt';
  if (method !== 'platt' && method !== 'isotonic') throw new UsageError(`--method must be "platt" or "isotonic", not "${method}"`);
  return {
    modelDirectory,
    ...files,
    candidates: integerOption(values.candidates, '--candidates', 1) ?? DEFAULT_CANDIDATES,
    maxQueries: integerOption(values['max-queries'], '--max-queries', 1),
    method,
    lexicalWeights: values['lexical-weights'] === undefined ? undefined : weightList(values['lexical-weights']),
    out,
  };
}

function weightList(value: string): number[] {
  const weights = value.split(',').map((item) => item.trim());
  if (weights.some((item) => item === '' || !Number.isFinite(Number(item)) || Number(item) < 0)) {
    throw new UsageError(`--lexical-weights must be comma-separated numbers ≥ 0, not "${value}"`);
  }
  return weights.map(Number);
}

/** The default grid in the model's own units (see REFERENCE_COSINE_SPREAD). */
function defaultLexicalWeights(family: ModelFamily, scored: readonly ScoredQuery[]): number[] {
  if (family === 'bi-encoder') return DEFAULT_LEXICAL_WEIGHTS;
  const stretch = standardDeviation(scored.flatMap((query) => query.semantic)) / REFERENCE_COSINE_SPREAD;
  return DEFAULT_LEXICAL_WEIGHTS.map((weight) => Number((weight * stretch).toPrecision(3)));
}

async function calibrateCommand(argv: string[]): Promise<number> {
  const options = parseOptions(argv);
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { directory, spec } = readModelDirectory(options.modelDirectory);
  const progress = (line: string) => process.stderr.write(`${line}\n`);

  const corpus = readJsonLines<BeirDocument>(options.corpus);
  const qrels = readQrels(options.qrels);
  const queries = judgedQueries(readJsonLines<BeirQuery>(options.queries), qrels, options.maxQueries);
  if (queries.length === 0) throw new UsageError(`no query in ${options.queries} has judgements in ${options.qrels}`);

  progress(`loading ${spec.id} from ${directory}`);
  // The service's own engine (workers, batches), so the fit sees the scores the service computes.
  // Bi-encoder documents recur across queries (one corpus); embedding each once makes a full qrels
  // run minutes instead of hours.
  const reranker = await NeuralReranker.open(directory, { embeddingCacheBytes: EVALUATION_CACHE_BYTES, maxQueuedDocuments: Number.MAX_SAFE_INTEGER });
  const started = performance.now();
  let scored: ScoredQuery[];
  try {
    scored = await scoreBm25Candidates({ corpus, queries, qrels, candidates: options.candidates, scorer: reranker, progress });
  } finally {
    await reranker.close();
  }
  const scoringSeconds = (performance.now() - started) / 1000;

  const weights = options.lexicalWeights ?? defaultLexicalWeights(spec.family, scored);
  const { best, sweep } = sweepLexicalWeights(scored, weights);
  const pairs = labelledPairs(scored, best.lexicalWeight);
  const positives = pairs.labels.filter((label) => label > 0).length;
  if (positives === 0) throw new Error(`none of the ${pairs.raw.length} candidate pairs is judged relevant: try more --candidates`);
  const ndcgAt10 = { bm25: meanNdcg(scored, null), model: meanNdcg(scored, 0), modelWithLexical: best.ndcgAt10 };
  // Both methods are measured so the summary can compare them; only the chosen one must fit.
  const reports = (['platt', 'isotonic'] as const).map((method): MethodReport | { method: CalibrationMethod; error: string } => {
    try {
      return fitAndMeasure(pairs, method, spec.family);
    } catch (error) {
      return { method, error: (error as Error).message };
    }
  });
  const chosen = reports.find((report) => report.method === options.method)!;
  if ('error' in chosen) throw new Error(`the ${chosen.method} fit failed: ${chosen.error}; nothing written`);

  const calibratedOn = {
    dataset: `${basename(dirname(resolve(options.corpus)))}: ${basename(options.corpus)} (${corpus.length} documents), ${basename(options.queries)}, ${basename(options.qrels)}`,
    date: new Date().toISOString(),
    queries: scored.length,
    candidates: `BM25 top ${options.candidates} per query from a local index of the corpus; unjudged count as not relevant`,
    pairs: pairs.raw.length,
    positives,
    method: chosen.method,
    lexicalWeightsTried: weights,
    ndcgAt10: { bm25: round(ndcgAt10.bm25), modelAlone: round(ndcgAt10.model), modelWithLexical: round(ndcgAt10.modelWithLexical) },
    reliability: {
      of: chosen.reliabilityOf,
      bands: chosen.reliability.map(({ band, count, relevant }) => ({ band, pairs: count, relevant })),
    },
  };
  writeSpec(options, { lexicalWeight: best.lexicalWeight, calibration: chosen.calibration, calibratedOn });

  process.stdout.write(
    summary({ options, scored, pairs: pairs.raw.length, positives, ndcgAt10, sweep, best, reports, chosen, scoringSeconds, spreadOfModelScores: standardDeviation(scored.flatMap((query) => query.semantic)) }),
  );
  return 0;
}

const round = (value: number) => Math.round(value * 10_000) / 10_000;

/** Rewrites the spec file in place (other keys and their order kept), through a temporary file so a crash leaves the old one. */
function writeSpec(options: CalibrateOptions, fitted: { lexicalWeight: number; calibration: MethodReport['calibration']; calibratedOn: object }): void {
  const problem = checkCalibration(fitted.calibration);
  if (problem) throw new Error(`the fitted calibration is unusable (${problem}); nothing written`);
  const source = existsSync(options.out) ? options.out : join(options.modelDirectory, MODEL_SPEC_FILE);
  let base: unknown;
  try {
    base = JSON.parse(readFileSync(source, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read ${source} to update it: ${(error as Error).message}`);
  }
  if (!base || typeof base !== 'object' || Array.isArray(base)) throw new Error(`${source} does not hold a JSON object; nothing written`);
  const updated = { ...(base as Record<string, unknown>), ...fitted };
  const temporary = `${options.out}.tmp-${process.pid}`;
  writeFileSync(temporary, JSON.stringify(updated, null, 2) + '\n');
  renameSync(temporary, options.out);
}

function summary(run: {
  options: CalibrateOptions;
  scored: readonly ScoredQuery[];
  pairs: number;
  positives: number;
  ndcgAt10: { bm25: number; model: number; modelWithLexical: number };
  sweep: { lexicalWeight: number; ndcgAt10: number }[];
  best: { lexicalWeight: number };
  reports: (MethodReport | { method: CalibrationMethod; error: string })[];
  chosen: MethodReport;
  scoringSeconds: number;
  spreadOfModelScores: number;
}): string {
  const { options, ndcgAt10, chosen } = run;
  const lines = [
    `calibrated on ${run.scored.length} queries, BM25 top ${options.candidates}: ${run.pairs} pairs, ${run.positives} relevant (${((run.positives / run.pairs) * 100).toFixed(1)}%)`,
    `scoring took ${run.scoringSeconds.toFixed(0)} s; spread (standard deviation) of the model's scores ${run.spreadOfModelScores.toFixed(4)}`,
    '',
    `nDCG@10 over the candidates:`,
    `  BM25 order                   ${ndcgAt10.bm25.toFixed(4)}`,
    `  model alone                  ${ndcgAt10.model.toFixed(4)}`,
    `  ${`model + ${run.best.lexicalWeight} × lexical`.padEnd(29)}${ndcgAt10.modelWithLexical.toFixed(4)}`,
    `lexical weight sweep: ${run.sweep.map((entry) => `${entry.lexicalWeight} → ${entry.ndcgAt10.toFixed(4)}`).join(', ')}`,
  ];
  for (const report of run.reports) {
    if ('error' in report) {
      lines.push('', `${report.method}: the fit failed: ${report.error}`);
      continue;
    }
    const parameters = report.calibration.method === 'platt' ? `slope ${report.calibration.slope.toFixed(4)}, intercept ${report.calibration.intercept.toFixed(4)}` : `${report.calibration.x.length} knots`;
    lines.push(
      '',
      `${report.method} (${parameters})${report === chosen ? ', written' : ''}: reliability on ${report.reliabilityOf}${report.reliabilityOf === 'held-out folds' ? ' (5 folds by query)' : ''}`,
      formatReliabilityTable(report.reliability),
      `  goal (≥ 0.75: ≥ ${RELIABILITY_GOAL.highBandMinimumShare * 100}% relevant, < 0.1: ≤ ${RELIABILITY_GOAL.lowBandMaximumShare * 100}% relevant): ${report.meetsGoal ? 'met' : 'not met'}`,
    );
  }
  lines.push('', `wrote lexicalWeight ${run.best.lexicalWeight} and the ${chosen.method} calibration to ${options.out}`);
  return lines.join('\n') + '\n';
}
