/**
 * Retrieval quality of the local index on SciFact (BEIR format): every abstract is upserted as a
 * page (title = title, text = text; src/cli/beir.ts) into a fresh index under
 * /tmp, then each train query with judgements is searched (top 10, default 'any' matching) and
 * scored by nDCG@10 against the train qrels, with linear gains as trec_eval / BEIR compute it.
 * Reference: plain BM25 (k1 0.9, b 0.4) over title + text scores 0.665.
 *
 * The data are read from ../shared/data/scifact and never copied; without them the run is skipped
 * with a message.
 *
 *   node dist/bench/index-quality.js [--data DIR] [--index-dir DIR] [--title-boosts 1,1.2,1.5]
 *                                    [--out FILE] [--max-seconds S]
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { indexCorpus, NDCG_CUTOFF, ndcgAtCutoff, readJsonLines, readQrels, searchDocumentIds } from '../src/cli/beir.js';
import type { BeirDocument, BeirQuery, Qrels } from '../src/cli/beir.js';
import { openLocalIndex } from '../src/local/index/index.js';
import type { LocalIndex } from '../src/local/types.js';
import { machineDescription, startWatchdog } from './index-bench-common.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values: flags } = parseArgs({
  options: {
    data: { type: 'string', default: resolve(REPO_ROOT, '../shared/data/scifact') },
    'index-dir': { type: 'string', default: '/tmp/searchgate-bench/scifact-index' },
    'title-boosts': { type: 'string', default: '' },
    out: { type: 'string', default: resolve(REPO_ROOT, 'bench/results/index-quality.json') },
    'max-seconds': { type: 'string', default: '600' },
  },
});

const BASELINE_BM25_NDCG = 0.665;

async function evaluate(index: LocalIndex, queries: readonly BeirQuery[], qrels: Qrels) {
  let sum = 0;
  let evaluated = 0;
  const started = performance.now();
  for (const query of queries) {
    const judged = qrels.get(query._id);
    if (!judged) continue;
    sum += ndcgAtCutoff(await searchDocumentIds(index, query.text, NDCG_CUTOFF), judged);
    evaluated++;
  }
  return { ndcgAt10: sum / evaluated, queries: evaluated, meanQueryMs: (performance.now() - started) / evaluated };
}

async function main(): Promise<void> {
  const dataDirectory = flags.data!;
  if (!existsSync(resolve(dataDirectory, 'corpus.jsonl'))) {
    console.log(`index-quality: skipped, SciFact not found at ${dataDirectory} (see ../shared/data/README.md)`);
    return;
  }
  startWatchdog(Number(flags['max-seconds']), 'index-quality');
  const corpus = readJsonLines<BeirDocument>(resolve(dataDirectory, 'corpus.jsonl'));
  const queries = readJsonLines<BeirQuery>(resolve(dataDirectory, 'queries-train.jsonl'));
  const qrels = readQrels(resolve(dataDirectory, 'qrels-train.tsv'));

  const indexDirectory = flags['index-dir']!;
  rmSync(indexDirectory, { recursive: true, force: true });
  let index = await openLocalIndex(indexDirectory);
  const ingestStarted = performance.now();
  await indexCorpus(index, corpus);
  const ingestSeconds = (performance.now() - ingestStarted) / 1000;
  console.log(`indexed ${corpus.length} abstracts in ${ingestSeconds.toFixed(1)} s`);

  const main = await evaluate(index, queries, qrels);
  console.log(`nDCG@10 ${main.ndcgAt10.toFixed(4)} over ${main.queries} train queries (BM25 baseline ${BASELINE_BM25_NDCG})`);
  await index.close();

  const sweep: { titleBoost: number; ndcgAt10: number }[] = [];
  for (const titleBoost of (flags['title-boosts'] ?? '').split(',').filter(Boolean).map(Number)) {
    index = await openLocalIndex(indexDirectory, { titleBoost });
    const { ndcgAt10 } = await evaluate(index, queries, qrels);
    await index.close();
    console.log(`  titleBoost ${titleBoost}: nDCG@10 ${ndcgAt10.toFixed(4)}`);
    sweep.push({ titleBoost, ndcgAt10 });
  }

  const report = {
    benchmark: 'index-quality',
    dataset: 'SciFact train queries and qrels (BEIR format)',
    date: new Date().toISOString(),
    machine: machineDescription(),
    documents: corpus.length,
    ingestSeconds,
    ...main,
    baselineBm25: BASELINE_BM25_NDCG,
    meetsBaseline: main.ndcgAt10 >= BASELINE_BM25_NDCG,
    titleBoostSweep: sweep,
  };
  mkdirSync(dirname(flags.out!), { recursive: true });
  writeFileSync(flags.out!, JSON.stringify(report, null, 2) + '\n');
  console.log(`wrote ${flags.out}`);
  process.exit(0);
}

await main();
