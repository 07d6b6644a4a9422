/**
 * Test collections in BEIR's format (corpus.jsonl, queries.jsonl, qrels tsv) and what the quality
 * measurements built on them share: loading the corpus into a local index, BM25 candidates from it,
 * and nDCG@10 with linear gains as trec_eval and BEIR compute it. Used by `searchgate calibrate` and
 * the index and rerank quality benchmarks.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { IndexWriter } from '../local/index/writer.js';
import { MODEL_SPEC_FILE } from '../local/rerank/model.js';
import { UsageError } from './args.js';
import type { IndexedPage, LocalIndex } from '../local/types.js';

export interface BeirDocument {
  _id: string;
  title: string;
  text: string;
}

export interface BeirQuery {
  _id: string;
  text: string;
}

/** query id → (document id → graded relevance). */
export type Qrels = Map<string, Map<string, number>>;

export const NDCG_CUTOFF = 10;

/** Throws with the line number when a line is not JSON, so a truncated download is easy to spot. */
export function readJsonLines<T>(path: string): T[] {
  const rows: T[] = [];
  readFileSync(path, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (line.trim().length === 0) return;
      try {
        rows.push(JSON.parse(line) as T);
      } catch (error) {
        throw new Error(`${path} line ${i + 1}: not valid JSON (${(error as Error).message})`);
      }
    });
  return rows;
}

/** Reads a BEIR qrels file: a header line, then `query-id <tab> corpus-id <tab> score`. */
export function readQrels(path: string): Qrels {
  const qrels: Qrels = new Map();
  for (const line of readFileSync(path, 'utf8').split('\n').slice(1)) {
    const [queryId, documentId, score] = line.trim().split('\t');
    if (!queryId || !documentId || score === undefined) continue;
    let judged = qrels.get(queryId);
    if (!judged) qrels.set(queryId, (judged = new Map()));
    judged.set(documentId, Number(score));
  }
  return qrels;
}

export function ndcgAtCutoff(ranked: readonly string[], judged: ReadonlyMap<string, number>, cutoff = NDCG_CUTOFF): number {
  const discount = (rank: number) => 1 / Math.log2(rank + 2);
  const dcg = ranked.slice(0, cutoff).reduce((sum, id, rank) => sum + (judged.get(id) ?? 0) * discount(rank), 0);
  const ideal = [...judged.values()].sort((a, b) => b - a).slice(0, cutoff);
  const idcg = ideal.reduce((sum, gain, rank) => sum + gain * discount(rank), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

const DOCUMENT_URL_PREFIX = 'https://beir.example/doc/';
const DOCUMENT_DOMAIN = new URL(DOCUMENT_URL_PREFIX).hostname;

/** A corpus document as the page the index stores, under a URL its id can be read back from. */
export function asPage(document: BeirDocument, fetchedAt: string): IndexedPage {
  const url = DOCUMENT_URL_PREFIX + encodeURIComponent(document._id);
  return {
    url,
    canonicalUrl: url,
    title: document.title,
    text: document.text,
    datePublished: null,
    domain: DOCUMENT_DOMAIN,
    language: 'en',
    fetchedAt,
    contentHash: createHash('sha256').update(document.text).digest('hex'),
  };
}

function documentIdOf(url: string): string {
  return decodeURIComponent(url.slice(DOCUMENT_URL_PREFIX.length));
}

/**
 * Writes the whole corpus through an IndexWriter: a fold's cost grows with the index, so it folds
 * once, not per batch, and always at the end, however small the corpus: a measurement reads the
 * indexes, not the scan of unindexed rows. The index is the measurement's own, with no reader in
 * another process to keep superseded versions for.
 */
export async function indexCorpus(index: LocalIndex, corpus: readonly BeirDocument[]): Promise<void> {
  const fetchedAt = new Date().toISOString();
  await IndexWriter.writeAll(index, corpus.map((document) => asPage(document, fetchedAt)), { keepVersionsMs: 0, foldAtClose: true });
}

/** The ids of the index's best `limit` BM25 hits for the query, best first. */
export async function searchDocumentIds(index: LocalIndex, query: string, limit: number): Promise<string[]> {
  const { hits } = await index.search({ query, limit, offset: 0, includeDomains: [], excludeDomains: [], window: null });
  return hits.map((hit) => documentIdOf(hit.page.url));
}

/** The text a reranker sees for a document: title and abstract, as BEIR's dense baselines embed them. */
export function rerankText(document: BeirDocument): string {
  return document.title ? `${document.title} ${document.text}` : document.text;
}

/**
 * The flags both kinds of calibration share: a model directory, a labelled collection in BEIR's
 * format, and the spec file to rewrite (default: the model's own); each checked, or a UsageError.
 */
export function collectionFlags(
  values: { model?: string; corpus?: string; queries?: string; qrels?: string; out?: string },
  positionals: readonly string[],
): { modelDirectory: string; corpus: string; queries: string; qrels: string; out: string } {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const required = (name: 'model' | 'corpus' | 'queries' | 'qrels'): string => {
    const value = values[name];
    if (value === undefined) throw new UsageError(`--${name} is required`);
    return value;
  };
  const modelDirectory = resolve(required('model'));
  if (!existsSync(modelDirectory) || !statSync(modelDirectory).isDirectory()) throw new UsageError(`no such model directory: ${modelDirectory}`);
  const files = { corpus: required('corpus'), queries: required('queries'), qrels: required('qrels') };
  for (const [name, path] of Object.entries(files)) {
    if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`--${name}: no such file: ${path}`);
  }
  const out = resolve(values.out ?? join(modelDirectory, MODEL_SPEC_FILE));
  if (!existsSync(dirname(out))) throw new UsageError(`--out: no such directory: ${dirname(out)}`);
  return { modelDirectory, ...files, out };
}
