/**
 * The extraction-dev set (../shared/data/extraction-dev, issue 22): loading its pages, scoring
 * predictions the way its score.py does (overall, without Readability's own outputs, per source,
 * type and language), and the reference figures and targets the report prints beside ours.
 * The pages and truths stay in the shared folder; nothing of them is copied into the repository.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { aggregateScore, cjkAwareTokens, compareTexts, type ExtractionScore, type ShingleCounts } from './extraction-score.js';

export const DEFAULT_EXTRACTION_DEV_DIR = '../shared/data/extraction-dev';

export const SPLITS = ['report', 'tune', 'all'] as const;
export type Split = (typeof SPLITS)[number];

export interface DevPage {
  id: string;
  source: string;
  type: string;
  lang: string;
  split: 'report' | 'tune';
  /** Null where the source does not know it (all of Dragnet and L3S-GN1, most of cwce). */
  url: string | null;
  truth: string;
  truthKind: 'annotated' | 'readability-output';
  /** The page's title where the source gives one (WCXB: the page's headline; Readability: its own title), else null. */
  title: string | null;
}

/** A line of pages.jsonl.gz, as far as the benchmark reads it. */
type PageRecord = Omit<DevPage, 'truthKind'> & { truth_kind: DevPage['truthKind'] };

/** The pages of one split (or all), in id order; throws with a message naming the folder when it is absent. */
export function loadDevPages(directory: string, split: Split): DevPage[] {
  const indexPath = join(directory, 'pages.jsonl.gz');
  if (!existsSync(indexPath)) {
    throw new Error(
      `extraction-dev data not found: ${indexPath} is missing (expected the shared data set in ${directory}; see ../shared/data/README.md, or pass --dev-data DIR)`,
    );
  }
  const records = gunzipSync(readFileSync(indexPath))
    .toString('utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as PageRecord);
  return records
    .filter((record) => split === 'all' || record.split === split)
    .map(({ id, source, type, lang, split: half, url, truth, truth_kind: truthKind, title }) => ({ id, source, type, lang, split: half, url, truth, truthKind, title: title ?? null }));
}

export function devPagePath(directory: string, id: string): string {
  return join(directory, 'pages', `${id}.html.gz`);
}

/** The page's URL; a page with no known URL gets its file's, as `searchgate extract <file>` gives it. */
export function devPageUrl(directory: string, page: Pick<DevPage, 'id' | 'url'>): string {
  return page.url ?? pathToFileURL(devPagePath(directory, page.id)).href;
}

/** The page's stored HTML (always UTF-8, gzipped on disk). */
export function readDevPageHtml(directory: string, id: string): Uint8Array {
  return new Uint8Array(gunzipSync(readFileSync(devPagePath(directory, id))));
}

export function scoreDevPage(page: DevPage, predicted: string): ShingleCounts {
  return compareTexts(page.truth, predicted, cjkAwareTokens);
}

export interface GroupScore extends ExtractionScore {
  pages: number;
}

/** score.py's groups: `all` (with `excluding readability-output`), then each source, type and language. */
export type DevReport = Record<'all' | 'source' | 'type' | 'lang', Record<string, GroupScore>>;

export function groupScores(pages: DevPage[], counts: ShingleCounts[]): DevReport {
  const groups: Record<keyof DevReport, Map<string, ShingleCounts[]>> = { all: new Map(), source: new Map(), type: new Map(), lang: new Map() };
  const add = (group: keyof DevReport, key: string, pageCounts: ShingleCounts) => {
    const members = groups[group].get(key) ?? [];
    members.push(pageCounts);
    groups[group].set(key, members);
  };
  pages.forEach((page, index) => {
    const pageCounts = counts[index]!;
    add('all', 'all', pageCounts);
    // Readability scores near 1 on its own outputs by construction: the README quotes the overall figure without them too.
    if (page.truthKind !== 'readability-output') add('all', 'excluding readability-output', pageCounts);
    add('source', page.source, pageCounts);
    add('type', page.type, pageCounts);
    add('lang', page.lang, pageCounts);
  });
  const scored = (members: Map<string, ShingleCounts[]>) =>
    Object.fromEntries([...members].map(([key, list]) => [key, { ...aggregateScore(list), pages: list.length }]));
  return { all: scored(groups.all), source: scored(groups.source), type: scored(groups.type), lang: scored(groups.lang) };
}

/** How near an extracted title is to the source's: the same words (case aside), and the F1 of their words. */
export interface TitleScore {
  exact: number;
  wordF1: number;
  pages: number;
}

const lowerCaseTokens = (text: string) => cjkAwareTokens(text.toLowerCase());

export function scoreTitle(truth: string, extracted: string | null): { exact: boolean; wordF1: number } {
  const counts = compareTexts(truth, extracted ?? '', lowerCaseTokens, 1);
  const exact = lowerCaseTokens(truth).join(' ') === lowerCaseTokens(extracted ?? '').join(' ');
  const { tp, fp, fn } = counts;
  return { exact, wordF1: fp === 0 && fn === 0 ? 1 : (2 * tp) / (2 * tp + fp + fn) };
}

/** Titles scored on the pages whose source gives one, overall and per source (WCXB's are headlines, Readability's its own titles). */
export function titleScores(pages: DevPage[], titles: (string | null)[]): Record<string, TitleScore> {
  const groups = new Map<string, { exact: number; wordF1: number; pages: number }>();
  pages.forEach((page, index) => {
    if (page.title === null) return;
    const { exact, wordF1 } = scoreTitle(page.title, titles[index] ?? null);
    for (const key of ['all', page.source]) {
      const group = groups.get(key) ?? { exact: 0, wordF1: 0, pages: 0 };
      group.exact += exact ? 1 : 0;
      group.wordF1 += wordF1;
      group.pages += 1;
      groups.set(key, group);
    }
  });
  return Object.fromEntries([...groups].map(([key, group]) => [key, { exact: group.exact / group.pages, wordF1: group.wordF1 / group.pages, pages: group.pages }]));
}

/** F1 on the report half from the set's README (2026-11-24, 2 shared cores), by group and key. */
export interface ReferenceFigures {
  searchgate9fab6d4: number;
  trafilatura: number;
  readability: number;
}

export const REFERENCE_SYSTEMS = 'searchgate main 9fab6d4 / trafilatura 2.3.1 / Readability 0.6.0 + linkedom';

const reference = (searchgate9fab6d4: number, trafilatura: number, readability: number): ReferenceFigures => ({ searchgate9fab6d4, trafilatura, readability });

export const REPORT_REFERENCE: Record<keyof DevReport, Record<string, ReferenceFigures>> = {
  all: { all: reference(0.778, 0.811, 0.756), 'excluding readability-output': reference(0.763, 0.8, 0.738) },
  source: {
    wcxb: reference(0.672, 0.742, 0.65),
    cleaneval: reference(0.907, 0.874, 0.85),
    readability: reference(0.964, 0.95, 0.987),
    'l3s-gn1': reference(0.917, 0.856, 0.905),
    'google-trends-2017': reference(0.779, 0.814, 0.753),
    dragnet: reference(0.905, 0.953, 0.897),
    cwce: reference(0.925, 0.91, 0.896),
    cleanportaleval: reference(0.962, 0.967, 0.969),
    htmltotext: reference(0.85, 0.856, 0.843),
  },
  type: {
    article: reference(0.904, 0.908, 0.894),
    listing: reference(0.542, 0.61, 0.494),
    product: reference(0.568, 0.614, 0.416),
    forum: reference(0.512, 0.704, 0.581),
    documentation: reference(0.896, 0.907, 0.88),
    other: reference(0.717, 0.765, 0.729),
  },
  lang: {
    en: reference(0.766, 0.802, 0.744),
    zh: reference(0.93, 0.916, 0.905),
    de: reference(0.897, 0.884, 0.931),
    fr: reference(0.661, 0.865, 0.658),
    hr: reference(0.984, 0.983, 0.982),
    ja: reference(0.977, 0.988, 1),
  },
};

/** Precision and recall overall of the reference systems (README), for the report's first line. */
export const REPORT_REFERENCE_PRECISION_RECALL: Record<keyof ReferenceFigures, { precision: number; recall: number }> = {
  searchgate9fab6d4: { precision: 0.816, recall: 0.744 },
  trafilatura: { precision: 0.819, recall: 0.804 },
  readability: { precision: 0.781, recall: 0.733 },
};

/**
 * Issue 22's targets on the report half: overall ≥ 0.86, each type at trafilatura + 0.05 (other has
 * none), and no source below trafilatura's own figure on it.
 */
export function targetFor(group: keyof DevReport, key: string): number | null {
  if (group === 'all') return key === 'all' ? 0.86 : null;
  if (group === 'type') return ({ article: 0.93, documentation: 0.93, listing: 0.7, product: 0.7, forum: 0.8 } as Record<string, number>)[key] ?? null;
  if (group === 'source') return REPORT_REFERENCE.source[key]?.trafilatura ?? null;
  return null;
}

/** Issue 22's speed targets: in process, and through the batch CLI on 2 cores. */
export const SPEED_TARGETS = { medianMsPerPage: 25, batchPagesPerSecond: 40 } as const;

/** score.py's table layout: groups by page count, then name; reference figures and target beside ours. */
export function formatDevReport(report: DevReport, split: Split): string {
  const lines: string[] = [];
  const withReference = split === 'report';
  const header = (title: string) =>
    `${title.padEnd(30)} ${'F1'.padStart(6)} ${'P'.padStart(6)} ${'R'.padStart(6)} ${'pages'.padStart(6)}` +
    (withReference ? `   ${'9fab6d4'.padStart(7)} ${'trafil.'.padStart(7)} ${'readab.'.padStart(7)}   ${'target'.padStart(6)}` : '');
  const figure = (value: number | undefined | null) => (value === undefined || value === null ? '-' : value.toFixed(3));
  for (const group of ['all', 'source', 'type', 'lang'] as const) {
    lines.push('', header(group));
    const rows = Object.entries(report[group]).sort(([nameA, a], [nameB, b]) => b.pages - a.pages || nameA.localeCompare(nameB));
    for (const [key, score] of rows) {
      let line = `${key.padEnd(30)} ${score.f1.toFixed(3).padStart(6)} ${score.precision.toFixed(3).padStart(6)} ${score.recall.toFixed(3).padStart(6)} ${String(score.pages).padStart(6)}`;
      if (withReference) {
        const known = REPORT_REFERENCE[group][key];
        const target = targetFor(group, key);
        const met = target === null ? '' : score.f1 >= target ? ' met' : ' not met';
        line += `   ${figure(known?.searchgate9fab6d4).padStart(7)} ${figure(known?.trafilatura).padStart(7)} ${figure(known?.readability).padStart(7)}   ${figure(target).padStart(6)}${met}`;
      }
      lines.push(line);
    }
  }
  return lines.join('\n');
}
