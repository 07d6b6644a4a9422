/**
 * What several benchmarks share: the machine description their reports carry, a watchdog, and the
 * 243k-page bench corpus (../shared/tools), built once under the work directory, never in the repo.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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
