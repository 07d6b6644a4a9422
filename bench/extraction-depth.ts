/**
 * How extraction's cost grows with how deeply a page nests its elements. Real pages nest 97 deep at
 * most (extraction-dev's 1,343; p99 36), but a crawler reads what it is sent: a page of ten thousand
 * nested tables or lists is a few hundred kilobytes. Each shape is extracted at doubling depths and
 * the growth per doubling is reported: about 2 is linear, about 4 quadratic. The crawler's reading of
 * a page's links and robots directives (readPageDirectives), which parses the page again on the main
 * thread, is timed beside it.
 *
 *   node dist/bench/extraction-depth.js [--baseline DIR] [--depths 2000,4000,8000,16000,32000] [--rounds 3] [--out FILE]
 *
 * With --baseline DIR (another checkout with `dist/` built, as for bench/extraction-ab.ts), every
 * page also goes through that build, in turn with this one, and its times and growth are reported
 * beside this build's.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readPageDirectives } from '../src/local/crawl/links.js';
import { extractDocument } from '../src/local/extract/index.js';
import { cpuMs, extractionCpuMs, importFromBuild, machineWithLoad, startWatchdog } from './index-bench-common.js';

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    depths: { type: 'string', default: '2000,4000,8000,16000,32000' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/results/extraction-depth.json' },
  },
});
const depths = args.depths!.split(',').map(Number);
const rounds = Math.max(1, Number(args.rounds));
startWatchdog(1800, 'extraction-depth');

type Extract = typeof extractDocument;
type ReadLinks = typeof readPageDirectives;
const baseline = args.baseline
  ? {
      extract: (await importFromBuild<{ extractDocument: Extract }>(args.baseline, 'src/local/extract/index.js')).extractDocument,
      readLinks: (await importFromBuild<{ readPageDirectives: ReadLinks }>(args.baseline, 'src/local/crawl/links.js')).readPageDirectives,
    }
  : null;

/** Each shape: the markup that opens one level and the markup that closes it. */
const SHAPES: Record<string, [open: string, close: string]> = {
  'nested div': ['<div class="box">', '</div>'],
  'nested table': ['<table><tr><td>', '</td></tr></table>'],
  'nested list': ['<ul><li>', '</li></ul>'],
  'nested inline': ['<span><b>', '</b></span>'],
};

function page([open, close]: [string, string], depth: number): string {
  return `<html><body><p>Before the nesting.</p>${open.repeat(depth)}innermost${close.repeat(depth)}<p>After the nesting.</p></body></html>`;
}

const PAGE_URL = 'https://bench.example/deep';
const timed = (extract: Extract, html: Uint8Array) => extractionCpuMs(extract, html, PAGE_URL);
function timedLinks(readLinks: ReadLinks, html: string): number {
  const start = cpuMs();
  readLinks(html, PAGE_URL, undefined);
  return cpuMs() - start;
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

interface Row {
  shape: string;
  depth: number;
  kilobytes: number;
  currentMs: number;
  baselineMs: number | null;
  /** The crawler's link reading of the same page. */
  linksMs: number;
  baselineLinksMs: number | null;
}
const rows: Row[] = [];
const loadBefore = os.loadavg()[0]!;
await timed(extractDocument, new TextEncoder().encode(page(SHAPES['nested div']!, 100))); // warm-up: JIT, lazy module loads
for (const [shape, markup] of Object.entries(SHAPES)) {
  for (const depth of depths) {
    const html = page(markup, depth);
    const bytes = new TextEncoder().encode(html);
    const current: number[] = [];
    const before: number[] = [];
    const links: number[] = [];
    const linksBefore: number[] = [];
    const measureBaseline = async () => {
      if (!baseline) return;
      before.push(await timed(baseline.extract, bytes));
      linksBefore.push(timedLinks(baseline.readLinks, html));
    };
    // Which build goes first alternates round by round.
    for (let round = 0; round < rounds; round += 1) {
      if (round % 2 === 1) await measureBaseline();
      current.push(await timed(extractDocument, bytes));
      links.push(timedLinks(readPageDirectives, html));
      if (round % 2 === 0) await measureBaseline();
    }
    const row: Row = {
      shape,
      depth,
      kilobytes: Math.round(bytes.length / 1024),
      currentMs: median(current),
      baselineMs: baseline ? median(before) : null,
      linksMs: median(links),
      baselineLinksMs: baseline ? median(linksBefore) : null,
    };
    rows.push(row);
    const previous = rows.at(-2)?.shape === shape ? rows.at(-2)! : null;
    const growth = (now: number, then: number | null | undefined) => (then ? `×${(now / then).toFixed(2)}` : '     ');
    const ms = (value: number) => `${value.toFixed(0).padStart(6)} ms`;
    console.log(
      `${shape.padEnd(14)} depth ${String(depth).padStart(6)} (${String(row.kilobytes).padStart(5)} KB): extract ${ms(row.currentMs)} ${growth(row.currentMs, previous?.currentMs)}` +
        (row.baselineMs === null ? '' : ` (baseline ${ms(row.baselineMs)} ${growth(row.baselineMs, previous?.baselineMs)})`) +
        `   links ${ms(row.linksMs)} ${growth(row.linksMs, previous?.linksMs)}` +
        (row.baselineLinksMs === null ? '' : ` (baseline ${ms(row.baselineLinksMs)} ${growth(row.baselineLinksMs, previous?.baselineLinksMs)})`),
    );
  }
}
const machine = machineWithLoad(loadBefore);
console.log(`machine: ${machine.cpus} CPUs, ${machine.cpuModel}, Node ${machine.node}; load ${loadBefore.toFixed(2)} → ${machine.loadAverage1m.after.toFixed(2)}`);
writeFileSync(
  args.out!,
  `${JSON.stringify({ benchmark: 'extraction-depth', baseline: args.baseline ? resolve(args.baseline) : null, date: new Date().toISOString(), machine, rounds, rows }, null, 2)}\n`,
);
