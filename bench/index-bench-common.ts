/**
 * What several benchmarks share: the machine description their reports carry, a watchdog, CPU time
 * and another build's modules for side-by-side runs, the
 * 243k-page bench corpus (../shared/tools), built once under the work directory, never in the repo,
 * and a synthetic corpus of any size, number of hosts and span of dates, made in memory.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { extractDocument } from '../src/local/extract/index.js';
import type { IndexedPage } from '../src/local/types.js';
import { seededRandom } from '../src/util/random.js';

export { motoServerPath } from '../test/helpers/s3-server.js';

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface MachineDescription {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  loadAverageAtStart: number[];
}

export function machineDescription(): MachineDescription {
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverageAtStart: os.loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

export const round3 = (value: number): number => Math.round(value * 1000) / 1000;

/** The machine, with the 1-minute load average at both ends of a run (to 3 decimals): the machine is shared. */
export function machineWithLoad(loadBefore: number): MachineDescription & { loadAverage1m: { before: number; after: number } } {
  return { ...machineDescription(), loadAverage1m: { before: round3(loadBefore), after: round3(os.loadavg()[0]!) } };
}

/** The CPU time this process has used, in ms (user and system, all its threads). */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** The CPU time one extraction of a page takes, in ms. */
export async function extractionCpuMs(extract: typeof extractDocument, html: Uint8Array, url: string): Promise<number> {
  const start = cpuMs();
  await extract(html, { url, contentType: 'text/html' });
  return cpuMs() - start;
}

/**
 * A module of another checkout's build (`DIR/dist/…`), loaded beside this one's so that two builds
 * run side by side in one process. The other checkout's own node_modules resolve its packages.
 */
export async function importFromBuild<T>(directory: string, modulePath: string): Promise<T> {
  return (await import(pathToFileURL(resolve(directory, 'dist', modulePath)).href)) as T;
}

/** Ends the run if it overstays, so a hung benchmark never outlives its time box. */
export function startWatchdog(maxSeconds: number, name: string): void {
  setTimeout(() => {
    console.error(`${name}: stopped by the watchdog after ${maxSeconds} s`);
    process.exit(3);
  }, maxSeconds * 1000).unref();
}

// ---------------------------------------------------------------------------------------------
// The bench corpus

const DEBIAN_PACKAGES = [
  'apache2-doc', 'bible-kjv', 'bible-kjv-text', 'cmake-doc', 'dict-foldoc', 'dict-gcide', 'dict-jargon', 'dictd',
  'glibc-doc', 'golang-1.19-doc', 'linux-doc-6.1', 'openjdk-17-doc', 'perl-doc', 'postgresql-doc-15',
  'python-django-doc', 'python-pandas-doc', 'python-requests-doc', 'python-scipy-doc', 'python-sqlalchemy-doc',
  'python3.11-doc', 'qtbase5-doc-html', 'ruby3.1-doc', 'rust-doc', 'sphinx-doc', 'sqlite3-doc',
  // The script's own needs: lxml for HTML, groff for man pages, and the Debian books it also reads.
  'python3-lxml', 'groff', 'debian-reference-en', 'debian-handbook', 'debian-policy', 'developers-reference',
];
const BAKEOFF_TOOLS = resolve(REPO_ROOT, '../shared/tools');
/** Debian's python3 has python3-lxml; a python3 earlier on PATH (pyenv) may not. */
const SYSTEM_PYTHON = '/usr/bin/python3';
export interface CorpusDocument {
  id: number;
  url: string;
  title: string;
  domain: string;
  datePublished: string;
  body: string;
}

function missingPackages(): string[] {
  return DEBIAN_PACKAGES.filter((name) => {
    try {
      const status = execFileSync('dpkg-query', ['-W', '-f=${Status}', name], { encoding: 'utf8', stdio: 'pipe' });
      return !status.includes('install ok installed');
    } catch {
      return true;
    }
  });
}

function run(command: string, args: string[], cwd: string): void {
  console.log(`$ ${command} ${args.join(' ')}`);
  execFileSync(command, args, { cwd, stdio: 'inherit' });
}

/** Runs the bake-off's recipe in workDir (once); returns the corpus path. */
export function ensureCorpus(workDir: string, options: { installPackages: boolean }): string {
  const corpus = join(workDir, 'corpus.jsonl');
  if (existsSync(corpus)) return corpus;
  const missing = missingPackages();
  if (missing.length > 0) {
    const install = ['install', '-y', '--no-install-recommends', ...missing];
    if (!options.installPackages) {
      console.error(`the bench corpus needs Debian packages; run\n  apt-get update && apt-get ${install.join(' ')}\n` +
        'or pass --install-packages (as root).');
      process.exit(2);
    }
    run('apt-get', ['update'], REPO_ROOT);
    run('apt-get', install, REPO_ROOT);
  }
  const sources = join(workDir, 'src');
  mkdirSync(sources, { recursive: true });
  // The scripts hard-code /tmp/bakeoff; a copy pointed at workDir keeps the originals untouched.
  for (const script of ['build_corpus.py', 'man2txt.sh']) {
    const original = readFileSync(join(BAKEOFF_TOOLS, script), 'utf8');
    writeFileSync(join(workDir, script), original.replaceAll('/tmp/bakeoff', workDir));
  }
  const started = performance.now();
  writeFileSync(join(sources, 'bible.txt'), execFileSync('bible', ['-f', 'Ge1:1-Re22:21'], { maxBuffer: 1 << 30 }));
  const manSections = [1, 2, 3, 4, 5, 6, 7, 8].map((section) => `/usr/share/man/man${section}`).filter(existsSync);
  run('bash', ['-c', `find ${manSections.join(' ')} -type f -print0 | xargs -0 -P2 -n200 bash man2txt.sh`], workDir);
  run(SYSTEM_PYTHON, ['build_corpus.py', 'html'], workDir);
  run(SYSTEM_PYTHON, ['build_corpus.py', 'html2'], workDir);
  run(SYSTEM_PYTHON, ['build_corpus.py', 'merge', corpus], workDir);
  console.log(`corpus built in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return corpus;
}


/** Least-squares line through the points: y ≈ intercept + slope × x. */
export function linearFit(points: readonly [number, number][]) {
  const n = points.length;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const slope = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0) / (points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0) || 1);
  return { intercept: meanY - slope * meanX, slope };
}

/**
 * Copy number `copy` (from 2) of a corpus page, under another URL and with a text of its own (a text
 * that another URL already holds is stored once): the corpus repeated past its own size.
 */
export function corpusCopy(page: { url: string; text: string }, copy: number): { url: string; text: string } {
  return { url: `${page.url}${page.url.includes('?') ? '&' : '?'}copy=${copy}`, text: `${page.text} (copy ${copy})` };
}

/** The kernel's counters of a live process: current RSS and its high-water mark, in bytes; null once it is gone or without /proc. */
export function processMemory(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: field('VmRSS'), peak: field('VmHWM') };
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// A synthetic corpus

export interface SyntheticCorpusOptions {
  pages: number;
  /** Hosts to draw from; each third one is a subdomain of the site before it. */
  hosts: number;
  /** Publication dates are spread uniformly, to the millisecond, over [fromMs, toMs); 2 % of pages have none. */
  fromMs: number;
  toMs: number;
  seed?: number;
  /** The first page's number: a second call with another offset makes further pages of the same corpus. */
  firstPage?: number;
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'da', 'pe', 'gu', 'zo', 'ba', 'fe', 'hi', 'ju'];
const TLDS = ['com', 'org', 'net', 'io', 'de', 'co.uk'];

/** The synthetic corpus's vocabulary: pseudo-words of two to four syllables, the most frequent first. */
export const SYNTHETIC_VOCABULARY: readonly string[] = Array.from({ length: 4000 }, (_, n) => {
  const parts: string[] = [];
  for (let rest = n + SYLLABLES.length; rest > 0; rest = Math.floor(rest / SYLLABLES.length)) parts.push(SYLLABLES[rest % SYLLABLES.length]!);
  return parts.join('');
});

/** Host `n`: a site of its own under one of a few TLDs, every third one a subdomain of the previous site. */
export function syntheticHost(n: number): string {
  const siteNumber = n % 3 === 2 ? n - 1 : n;
  const site = `site${siteNumber}.${TLDS[siteNumber % TLDS.length]}`;
  return n % 3 === 2 ? `blog.${site}` : site;
}

/**
 * Pages of random text (skewed word frequencies, so queries have common and rare words), on up to
 * `hosts` hosts of skewed sizes (the smallest may get no page), dated over a span of years. The same
 * options give the same pages on every machine.
 */
export function syntheticPages(options: SyntheticCorpusOptions): IndexedPage[] {
  const firstPage = options.firstPage ?? 0;
  const random = seededRandom((options.seed ?? 20261126) + firstPage);
  const word = () => SYNTHETIC_VOCABULARY[Math.floor(SYNTHETIC_VOCABULARY.length * random() ** 3)]!;
  const words = (count: number) => Array.from({ length: count }, word).join(' ');
  const pages: IndexedPage[] = [];
  for (let n = firstPage; n < firstPage + options.pages; n++) {
    // A crawl's sites are of very unequal sizes: a few big ones (host 0 holds ~8 % of 2,000 hosts' pages), a long tail.
    const host = syntheticHost(Math.floor(options.hosts * random() ** 3));
    const published = random() < 0.02 ? null : new Date(options.fromMs + Math.floor(random() * (options.toMs - options.fromMs)));
    const text = words(60 + Math.floor(random() * 140));
    const url = `https://${host}/page/${n}`;
    pages.push({
      url,
      canonicalUrl: url,
      title: words(3 + Math.floor(random() * 5)),
      text,
      datePublished: published?.toISOString() ?? null,
      domain: host,
      language: 'en',
      fetchedAt: '2026-11-26T00:00:00.000Z',
      contentHash: `synthetic-${n}-${text.length}`,
    });
  }
  return pages;
}
