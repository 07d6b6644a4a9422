/**
 * `searchgate calibrate --retrieval`: fits the local index's hybrid scorer (src/local/index/hybrid.ts)
 * for a bi-encoder model, and writes its weights into the model's spec as `retrieval`.
 *
 * The corpus goes into a local index through the same writer and embedder as `searchgate index add`,
 * so the fit sees the vectors and candidates the service sees. Two kinds of query are fitted
 * together, each counting as much as the other whatever their numbers: the collection's judged
 * queries (topical relevance) and known-item queries, a sample of the corpus's titles, each of whose
 * one relevant page is the page it names. One ranking then serves both, without rules for either.
 *
 * The weights are fitted for ranking: a logistic model on pairs (a relevant and a non-relevant
 * candidate of one query: which comes first?), then a Platt fit of the pairwise score to P(relevant)
 * on the candidates themselves, so that a result's relevance is a probability. The pairwise fit is
 * made twice, with the legs' ranks and without them (their weights then 0): fitted well, the ranks
 * separate the many easy pairs and cost the top of the ranking on SciFact once the scores carry the
 * same votes (docs/benchmarks.md, "A title vector"), which a corpus's own folds decide. A pointwise
 * logistic fit is measured beside them. Every figure is on held-out folds of queries; the fit with
 * the best held-out figures is written, fitted on all of them.
 */
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_PAGE_WINDOWS, openPageEmbedder } from '../local/index/embedder.js';
import { DEFAULT_HYBRID_WEIGHTS, HYBRID_FEATURES, hybridCandidates, relevance, type HybridFeature, type HybridFeatures, type HybridWeights } from '../local/index/hybrid.js';
import { openLocalIndex } from '../local/index/index.js';
import { fitLogistic } from '../local/index/logistic.js';
import { IndexWriter } from '../local/index/writer.js';
import { MODEL_SPEC_FILE, readModelDirectory } from '../local/rerank/model.js';
import { seededRandom } from '../util/random.js';
import { UsageError, integerOption } from './args.js';
import { asPage, collectionFlags, ndcgAtCutoff, readJsonLines, readQrels, type BeirDocument, type BeirQuery } from './beir.js';

export const RETRIEVAL_USAGE = `usage: searchgate calibrate --retrieval --model DIR --corpus FILE --queries FILE --qrels FILE [options]

Fits the local index's hybrid scorer (full-text and vector candidates, scored from stored vectors)
for a bi-encoder model, and writes its weights into the model's ${MODEL_SPEC_FILE} as "retrieval".

options:
  --model DIR           the model directory (a bi-encoder)
  --corpus FILE         BEIR corpus.jsonl: {_id, title, text} per line
  --queries FILE        BEIR queries .jsonl; only judged queries are used
  --qrels FILE          BEIR qrels .tsv with a header line
  --candidates N        candidates each leg brings, as providers.local.candidates (default 40)
  --known-items N       titles of the corpus used as known-item queries (default 800; 0: none)
  --folds N             folds of queries for the held-out figures (default 5)
  --windows N           windows of each page embedded, from its start (default ${DEFAULT_PAGE_WINDOWS}, as index add)
  --index-dir DIR       keep the corpus's index there (reused by a later run); default: a temporary one
  --out FILE            the spec file to rewrite (default: DIR/${MODEL_SPEC_FILE})`;

interface RetrievalOptions {
  modelDirectory: string;
  corpus: string;
  queries: string;
  qrels: string;
  candidates: number;
  knownItems: number;
  folds: number;
  windows: number;
  indexDirectory: string | undefined;
  out: string;
}

/** A query's candidates with their features and judgements. */
interface LabelledQuery {
  kind: 'judged' | 'known-item';
  features: HybridFeatures[];
  /** Graded relevance per candidate (0: not relevant). */
  gains: number[];
  /** Candidate order as the full-text leg ranks it, for the BM25 baseline. */
  bm25Ranks: number[];
  /** Every relevant document of the query, found or not (nDCG's ideal). */
  judged: Map<string, number>;
  ids: string[];
  fold: number;
}

const NDCG_AT = 10;
const MRR_AT = 10;
const SEED = 17;

export function parseRetrievalOptions(argv: string[]): RetrievalOptions | 'help' {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      retrieval: { type: 'boolean' },
      model: { type: 'string' },
      corpus: { type: 'string' },
      queries: { type: 'string' },
      qrels: { type: 'string' },
      candidates: { type: 'string' },
      'known-items': { type: 'string' },
      folds: { type: 'string' },
      windows: { type: 'string' },
      'index-dir': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';
  const { modelDirectory, out, ...files } = collectionFlags(values, positionals);
  const folds = integerOption(values.folds, '--folds', 2) ?? 5;
  return {
    modelDirectory,
    ...files,
    candidates: integerOption(values.candidates, '--candidates', 1) ?? 40,
    knownItems: integerOption(values['known-items'], '--known-items', 0) ?? 800,
    folds,
    windows: integerOption(values.windows, '--windows', 1) ?? DEFAULT_PAGE_WINDOWS,
    indexDirectory: values['index-dir'] === undefined ? undefined : resolve(values['index-dir']),
    out,
  };
}

export async function calibrateRetrieval(options: RetrievalOptions, progress: (line: string) => void): Promise<string> {
  const { spec } = readModelDirectory(options.modelDirectory);
  const corpus = readJsonLines<BeirDocument>(options.corpus);
  const qrels = readQrels(options.qrels);
  const judgedQueries = readJsonLines<BeirQuery>(options.queries).filter((query) => qrels.has(query._id));
  if (judgedQueries.length === 0) throw new UsageError(`no query in ${options.queries} has judgements in ${options.qrels}`);

  const directory = options.indexDirectory ?? mkdtempSync(join(tmpdir(), 'searchgate-calibrate-retrieval-'));
  const loaded = await openPageEmbedder(options.modelDirectory, { maxWindows: options.windows });
  const index = await openLocalIndex(directory);
  const started = performance.now();
  let labelled: LabelledQuery[];
  try {
    progress(`indexing ${corpus.length} documents with vectors of ${loaded.embedder.model} into ${directory}`);
    const fetchedAt = new Date().toISOString();
    // Folded at the end however small the corpus: the fit is of the ranking the indexes give.
    const counters = await IndexWriter.writeAll(index, corpus.map((document) => asPage(document, fetchedAt)), { embedder: loaded.embedder, foldAtClose: true });
    progress(`indexed: ${counters.written} written, ${counters.unchanged} already in, in ${((performance.now() - started) / 1000).toFixed(0)} s`);

    const queries = [
      ...judgedQueries.map((query) => ({ kind: 'judged' as const, text: query.text, judged: qrels.get(query._id)! })),
      ...knownItemQueries(corpus, options.knownItems),
    ];
    labelled = [];
    for (const [i, query] of queries.entries()) {
      const found = await hybridCandidates(
        index,
        { query: query.text, limit: options.candidates, offset: 0, includeDomains: [], excludeDomains: [], window: null },
        loaded.embedder,
        options.candidates,
      );
      if ('fullTextOnly' in found) throw new Error(`the index cannot serve vectors: ${found.fullTextOnly}`);
      const ids = found.candidates.map(({ hit }) => decodeURIComponent(hit.page.url.slice(hit.page.url.lastIndexOf('/') + 1)));
      labelled.push({
        kind: query.kind,
        features: found.features,
        gains: ids.map((id) => query.judged.get(id) ?? 0),
        bm25Ranks: found.candidates.map(({ bm25Rank }) => bm25Rank),
        judged: query.judged,
        ids,
        fold: i % options.folds,
      });
      if ((i + 1) % 500 === 0) progress(`candidates of ${i + 1} / ${queries.length} queries`);
    }
  } finally {
    await Promise.allSettled([index.close(), loaded.close()]);
    if (!options.indexDirectory) rmSync(directory, { recursive: true, force: true });
  }

  // Held-out figures: each fold scored by weights fitted on the others.
  const methods = {
    pairwise: (queries: readonly LabelledQuery[]) => fitPairwise(queries, []),
    pairwiseWithoutRanks: (queries: readonly LabelledQuery[]) => fitPairwise(queries, RANK_FEATURES),
    pointwise: fitPointwise,
  } as const;
  const heldOut = Object.fromEntries(
    Object.entries(methods).map(([name, fit]) => {
      const perQuery = new Array<HybridWeights>(labelled.length);
      for (let fold = 0; fold < options.folds; fold++) {
        const weights = fit(labelled.filter((query) => query.fold !== fold));
        labelled.forEach((query, i) => query.fold === fold && (perQuery[i] = weights));
      }
      return [name, measure(labelled, (query, i) => query.features.map((features) => relevance(perQuery[i]!, features)))];
    }),
  ) as Record<keyof typeof methods, Measures>;
  const baselines = {
    bm25: measure(labelled, (query) => query.bm25Ranks.map((rank) => -rank)),
    rrf: measure(labelled, (query) => query.features.map((features) => features.bm25Rank + features.vectorRank)),
    cosine: measure(labelled, (query) => query.features.map((features) => features.cosine)),
    defaults: measure(labelled, (query) => query.features.map((features) => relevance(DEFAULT_HYBRID_WEIGHTS, features))),
    // What the reranker computes (cosine + lexicalWeight × in-request BM25), on the same candidates.
    rerankerFormula: measure(labelled, (query) => query.features.map((features) => features.cosine + spec.lexicalWeight * features.lexical)),
  };
  // The first of the best, in this order: ties keep the legs' ranks, and the pairwise fit.
  const chosen = (Object.keys(methods) as (keyof typeof methods)[]).reduce((best, name) => (heldOut[name].objective > heldOut[best].objective ? name : best));
  const weights = methods[chosen](labelled);
  const judgedCount = labelled.filter((query) => query.kind === 'judged').length;
  const retrievalCalibratedOn = {
    dataset: `${basename(dirname(resolve(options.corpus)))}: ${basename(options.corpus)} (${corpus.length} documents), ${basename(options.queries)} (${judgedCount} judged queries), ${labelled.length - judgedCount} titles as known-item queries`,
    date: new Date().toISOString(),
    candidates: `the local index's full-text and vector top ${options.candidates} per query, fused; ${options.windows} window(s) of each page embedded`,
    method: METHOD_NAMES[chosen],
    heldOut: { folds: options.folds, ...Object.fromEntries(Object.entries({ ...baselines, ...heldOut }).map(([name, value]) => [name, roundMeasures(value)])) },
  };
  writeRetrieval(options, weights, retrievalCalibratedOn);

  const row = (name: string, value: Measures) => `  ${name.padEnd(34)}${value.ndcgAt10.toFixed(4)}   ${value.knownItemMrr.toFixed(4)}`;
  return [
    `fitted on ${judgedCount} judged queries and ${labelled.length - judgedCount} known-item queries; candidates: top ${options.candidates} of each leg`,
    `spec ${spec.id}; took ${((performance.now() - started) / 1000).toFixed(0)} s`,
    '',
    `held out (${options.folds} folds by query):   nDCG@10  known-item MRR@10`,
    row('BM25 order', baselines.bm25),
    row('cosine alone', baselines.cosine),
    row('reciprocal rank fusion', baselines.rrf),
    row(`cosine + ${spec.lexicalWeight} × lexical (reranker)`, baselines.rerankerFormula),
    row('default weights', baselines.defaults),
    row('pointwise logistic', heldOut.pointwise),
    row('pairwise logistic + Platt', heldOut.pairwise),
    row('the same without the legs\' ranks', heldOut.pairwiseWithoutRanks),
    '',
    `wrote the weights of the ${METHOD_NAMES[chosen]} to ${options.out}: ${HYBRID_FEATURES.map((name) => `${name} ${weights[name].toPrecision(4)}`).join(', ')}, intercept ${weights.intercept.toPrecision(4)}`,
  ].join('\n') + '\n';
}

const METHOD_NAMES = {
  pairwise: 'pairwise logistic (ranking), then Platt to P(relevant)',
  pairwiseWithoutRanks: "pairwise logistic (ranking) without the legs' ranks, then Platt to P(relevant)",
  pointwise: 'pointwise logistic',
} as const;

/** Reciprocal ranks in each leg (RRF's terms), which a pairwise fit may leave out (weights 0). */
const RANK_FEATURES: readonly HybridFeature[] = ['bm25Rank', 'vectorRank'];

/** A seeded sample of the corpus's distinct, non-empty titles, each naming its one page. */
function knownItemQueries(corpus: readonly BeirDocument[], count: number) {
  const byTitle = new Map<string, string[]>();
  for (const document of corpus) {
    const title = document.title.trim();
    if (title) byTitle.set(title, [...(byTitle.get(title) ?? []), document._id]);
  }
  const unique = [...byTitle.entries()].filter(([, ids]) => ids.length === 1);
  const random = seededRandom(SEED);
  for (let i = unique.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [unique[i], unique[j]] = [unique[j]!, unique[i]!];
  }
  return unique.slice(0, count).map(([title, ids]) => ({ kind: 'known-item' as const, text: title, judged: new Map([[ids[0]!, 1]]) }));
}

const vector = (features: HybridFeatures) => HYBRID_FEATURES.map((name) => features[name]);
const asWeights = (intercept: number, weights: readonly number[]): HybridWeights =>
  ({ intercept, ...Object.fromEntries(HYBRID_FEATURES.map((name, j) => [name, weights[j]!])) }) as HybridWeights;

/** Each kind of query weighs as much as the other in a fit, and within a kind each query alike. */
function queryWeights(queries: readonly LabelledQuery[]): Map<LabelledQuery, number> {
  const kinds = new Set(queries.map((query) => query.kind));
  const perKind = new Map([...kinds].map((kind) => [kind, queries.filter((query) => query.kind === kind).length]));
  return new Map(queries.map((query) => [query, 1 / (kinds.size * perKind.get(query.kind)!)]));
}

/** One row per candidate of every query, labelled relevant or not, each query weighing its share. */
function candidateRows(queries: readonly LabelledQuery[], rowOf: (features: HybridFeatures) => number[]) {
  const weightOf = queryWeights(queries);
  const rows: number[][] = [];
  const labels: number[] = [];
  const sampleWeights: number[] = [];
  for (const query of queries) {
    query.features.forEach((features, i) => {
      rows.push(rowOf(features));
      labels.push(query.gains[i]! > 0 ? 1 : 0);
      sampleWeights.push(weightOf.get(query)! / query.features.length);
    });
  }
  return { rows, labels, sampleWeights: normalized(sampleWeights) };
}

function fitPointwise(queries: readonly LabelledQuery[]): HybridWeights {
  const { rows, labels, sampleWeights } = candidateRows(queries, vector);
  const model = fitLogistic(rows, labels, { sampleWeights });
  return asWeights(model.intercept, model.weights);
}

/**
 * Ranking weights from pairs (relevant minus non-relevant features, and the reverse, labelled 1 and
 * 0), then a Platt fit of their score to the candidates' relevance: the ranking is the pairwise
 * fit's, the probabilities the candidates'. The `leftOut` features weigh 0.
 */
function fitPairwise(queries: readonly LabelledQuery[], leftOut: readonly HybridFeature[]): HybridWeights {
  const used = HYBRID_FEATURES.filter((name) => !leftOut.includes(name));
  const vector = (features: HybridFeatures) => used.map((name) => features[name]);
  const weightOf = queryWeights(queries);
  const rows: number[][] = [];
  const labels: number[] = [];
  const sampleWeights: number[] = [];
  for (const query of queries) {
    const relevant = query.features.filter((_, i) => query.gains[i]! > 0).map(vector);
    const other = query.features.filter((_, i) => query.gains[i]! === 0).map(vector);
    const pairs = relevant.length * other.length;
    for (const a of relevant) {
      for (const b of other) {
        const difference = a.map((value, j) => value - b[j]!);
        rows.push(difference, difference.map((value) => -value));
        labels.push(1, 0);
        sampleWeights.push(weightOf.get(query)! / pairs, weightOf.get(query)! / pairs);
      }
    }
  }
  // An exact title separates a known item from the rest outright on a small, clean corpus, so the
  // data set no bound on its weight and the penalty alone would decide it (about 1.2 on SciFact,
  // too little on a corpus whose titles share a long suffix): it is left unshrunk.
  const ranking = fitLogistic(rows, labels, { l2: RANKING_L2, sampleWeights: normalized(sampleWeights), unpenalized: [used.indexOf('exactTitle')] });
  const points = candidateRows(queries, (features) => [vector(features).reduce((sum, value, j) => sum + value * ranking.weights[j]!, 0)]);
  const platt = fitLogistic(points.rows, points.labels, { l2: 0, sampleWeights: points.sampleWeights });
  const slope = platt.weights[0]!;
  const fitted = new Map(used.map((name, j) => [name, ranking.weights[j]! * slope]));
  return asWeights(platt.intercept, HYBRID_FEATURES.map((name) => fitted.get(name) ?? 0));
}

/**
 * The ranking fit's penalty per row. Pairs number in the hundreds of thousands, which pin the few
 * weights down without help; fitLogistic's default (1e-2 per row) shrank the rank features' weights
 * so much that held-out nDCG@10 on SciFact fell from 0.740 to 0.726 (docs/benchmarks.md).
 */
const RANKING_L2 = 1e-6;

/** Scaled to sum to the number of rows, so the penalty means the same whatever the weighting. */
function normalized(weights: readonly number[]): number[] {
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  return weights.map((weight) => (weight * weights.length) / total);
}

interface Measures {
  ndcgAt10: number;
  knownItemMrr: number;
  /** What the choice between fits maximizes: the mean of the two. */
  objective: number;
}

function measure(queries: readonly LabelledQuery[], score: (query: LabelledQuery, index: number) => number[]): Measures {
  let ndcg = 0;
  let judged = 0;
  let mrr = 0;
  let known = 0;
  queries.forEach((query, i) => {
    const scores = score(query, i);
    const order = scores.map((_, k) => k).sort((a, b) => scores[b]! - scores[a]! || query.bm25Ranks[a]! - query.bm25Ranks[b]!);
    const ranked = order.map((k) => query.ids[k]!);
    if (query.kind === 'judged') {
      ndcg += ndcgAtCutoff(ranked, query.judged, NDCG_AT);
      judged++;
    } else {
      const rank = ranked.slice(0, MRR_AT).findIndex((id) => query.judged.has(id));
      mrr += rank >= 0 ? 1 / (rank + 1) : 0;
      known++;
    }
  });
  const ndcgAt10 = judged ? ndcg / judged : 0;
  const knownItemMrr = known ? mrr / known : 0;
  return { ndcgAt10, knownItemMrr, objective: known ? (ndcgAt10 + knownItemMrr) / 2 : ndcgAt10 };
}

const roundMeasures = (value: Measures) => ({ ndcgAt10: Math.round(value.ndcgAt10 * 1e4) / 1e4, knownItemMrrAt10: Math.round(value.knownItemMrr * 1e4) / 1e4 });

/** Rewrites the spec file with `retrieval` and its provenance, other keys kept, through a temporary file. */
function writeRetrieval(options: RetrievalOptions, retrieval: HybridWeights, retrievalCalibratedOn: object): void {
  if (!Object.values(retrieval).every(Number.isFinite)) throw new Error('the fitted weights are not finite; nothing written');
  const source = existsSync(options.out) ? options.out : join(options.modelDirectory, MODEL_SPEC_FILE);
  const base = JSON.parse(readFileSync(source, 'utf8')) as Record<string, unknown>;
  const rounded = Object.fromEntries(Object.entries(retrieval).map(([key, value]) => [key, Number(value.toPrecision(6))]));
  const temporary = `${options.out}.tmp-${process.pid}`;
  writeFileSync(temporary, JSON.stringify({ ...base, retrieval: rounded, retrievalCalibratedOn }, null, 2) + '\n');
  renameSync(temporary, options.out);
}
