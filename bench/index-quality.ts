/**
 * Retrieval quality of the local index on SciFact (BEIR format): every abstract is upserted as a
 * page (https://scifact.example/doc/<_id>, title = title, text = text) into a fresh index under
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
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openLocalIndex } from '../src/local/index/index.js';
import type { IndexedPage, LocalIndex } from '../src/local/types.js';
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
const CUTOFF = 10;
const BATCH_SIZE = 1000;

interface CorpusDocument {
  _id: string;
  title: string;
  text: string;
}

function readJsonLines<T>(path: string): T[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}

/** query id → (document id → graded relevance). */
function readQrels(path: string): Map<string, Map<string, number>> {
  const qrels = new Map<string, Map<string, number>>();
  for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
    const [queryId, documentId, score] = line.trim().split('\t');
    if (!queryId || !documentId || score === undefined) continue;
    let judged = qrels.get(queryId);
    if (!judged) qrels.set(queryId, (judged = new Map()));
    judged.set(documentId, Number(score));
  }
  return qrels;
}

function ndcgAtCutoff(ranked: readonly string[], judged: ReadonlyMap<string, number>): number {
  const discount = (rank: number) => 1 / Math.log2(rank + 2);
  const dcg = ranked.slice(0, CUTOFF).reduce((sum, id, rank) => sum + (judged.get(id) ?? 0) * discount(rank), 0);
  const ideal = [...judged.values()].sort((a, b) => b - a).slice(0, CUTOFF);
  const idcg = ideal.reduce((sum, gain, rank) => sum + gain * discount(rank), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

const DOCUMENT_URL_PREFIX = 'https://scifact.example/doc/';

function asPage(document: CorpusDocument, fetchedAt: string): IndexedPage {
  const url = DOCUMENT_URL_PREFIX + document._id;
  return {
    url,
    canonicalUrl: url,
    title: document.title,
    text: document.text,
    datePublished: null,
    domain: 'scifact.example',
    language: 'en',
    fetchedAt,
    contentHash: createHash('sha256').update(document.text).digest('hex'),
  };
}

async function evaluate(index: LocalIndex, queries: readonly { _id: string; text: string }[], qrels: Map<string, Map<string, number>>) {
  let sum = 0;
  let evaluated = 0;
  const started = performance.now();
  for (const query of queries) {
    const judged = qrels.get(query._id);
    if (!judged) continue;
    const { hits } = await index.search({
      query: query.text,
      limit: CUTOFF,
      offset: 0,
      includeDomains: [],
      excludeDomains: [],
      window: null,
    });
    sum += ndcgAtCutoff(
      hits.map((hit) => hit.page.url.slice(DOCUMENT_URL_PREFIX.length)),
      judged,
    );
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
  const corpus = readJsonLines<CorpusDocument>(resolve(dataDirectory, 'corpus.jsonl'));
  const queries = readJsonLines<{ _id: string; text: string }>(resolve(dataDirectory, 'queries-train.jsonl'));
  const qrels = readQrels(resolve(dataDirectory, 'qrels-train.tsv'));

  const indexDirectory = flags['index-dir']!;
  rmSync(indexDirectory, { recursive: true, force: true });
  const fetchedAt = new Date().toISOString();
  let index = await openLocalIndex(indexDirectory);
  const ingestStarted = performance.now();
  for (let start = 0; start < corpus.length; start += BATCH_SIZE) {
    await index.upsert(corpus.slice(start, start + BATCH_SIZE).map((document) => asPage(document, fetchedAt)));
  }
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
