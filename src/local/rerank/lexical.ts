/**
 * The lexical half of the local reranker's raw score: BM25 of the query against each document, with
 * the term statistics (document frequency, average length) taken from the documents of the same
 * request. A small bi-encoder misses exact-term evidence (a gene name, a drug, a number) that BM25
 * catches; on SciFact the mix beats either alone (docs/reranker.md). Taking statistics from the
 * request keeps the reranker self-contained: a term every candidate shares weighs little, and with
 * only one or two documents the weights are small, so the model's score dominates.
 */
import { queryStems, stemWord } from '../index/terms.js';

const WORD_PATTERN = /[\p{L}\p{N}]+/gu;
const K1 = 0.9;
const B = 0.4;

/** How often each of `stems` occurs in a text (other words are only counted in its length), and its length in words. */
export function documentTerms(text: string, stems: ReadonlySet<string>): { counts: Map<string, number>; length: number } {
  const counts = new Map<string, number>();
  let length = 0;
  for (const [word] of text.matchAll(WORD_PATTERN)) {
    length++;
    const stem = stemWord(word);
    if (stems.has(stem)) counts.set(stem, (counts.get(stem) ?? 0) + 1);
  }
  return { counts, length };
}

/** BM25 (k1 0.9, b 0.4, as BEIR's baseline) of the query against each document, statistics from the set. */
export function inRequestBm25(query: string, documents: readonly string[]): number[] {
  const stems = queryStems(query);
  if (stems.length === 0 || documents.length === 0) return documents.map(() => 0);
  const wanted = new Set(stems);
  const terms = documents.map((document) => documentTerms(document, wanted));
  const total = terms.length;
  const averageLength = Math.max(1, terms.reduce((sum, doc) => sum + doc.length, 0) / total);
  const idf = stems.map((stem) => {
    const frequency = terms.reduce((sum, doc) => sum + (doc.counts.has(stem) ? 1 : 0), 0);
    return Math.log(1 + (total - frequency + 0.5) / (frequency + 0.5));
  });
  return terms.map((doc) => {
    let score = 0;
    stems.forEach((stem, i) => {
      const count = doc.counts.get(stem);
      if (count) score += (idf[i]! * count * (K1 + 1)) / (count + K1 * (1 - B + (B * doc.length) / averageLength));
    });
    return score;
  });
}
