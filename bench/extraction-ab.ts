/**
 * Two builds of the extractor side by side in one process: each page of an extraction-dev split goes
 * through both, in turn (which goes first alternates page by page and round by round), and the CPU
 * time each build spends is summed. The ratio this gives is what a change costs or saves. Two runs of
 * the extraction benchmark, one per build, only compare when the host's speed holds still between
 * them; on the shared 2-vCPU VMs it drifts by 15-50% within the hour, which hides a change of a few
 * percent. Here drift falls on both builds alike.
 *
 *   node dist/bench/extraction-ab.js --baseline DIR [--split tune|report|all] [--rounds 2] [--out FILE]
 *
 * DIR is another checkout with `dist/` built (`git worktree add DIR REV && npx tsc -p DIR`). Its
 * packages are those its own node_modules resolve to: a symbolic link to this checkout's node_modules
 * shares them, patches included; to compare a patch of a package, give DIR a node_modules of links to
 * this one's packages but a copy of the one patched as it was. Both builds share one heap, so each
 * pays for the other's garbage a little; the ratio is for CPU per page, not for memory.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { extractDocument } from '../src/local/extract/index.js';
import { DEFAULT_EXTRACTION_DEV_DIR, SPLITS, devPageUrl, loadDevPages, readDevPageHtml, type Split } from './extraction-dev.js';
import { extractionCpuMs, importFromBuild, machineWithLoad } from './index-bench-common.js';

const { values: args } = parseArgs({
  options: {
    baseline: { type: 'string' },
    'dev-data': { type: 'string', default: DEFAULT_EXTRACTION_DEV_DIR },
    split: { type: 'string', default: 'tune' },
    rounds: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '50' },
    out: { type: 'string', default: 'bench/results/extraction-ab.json' },
  },
});
if (!args.baseline) throw new Error('--baseline DIR is required: a checkout of the build to compare against, with dist/ built');
if (!(SPLITS as readonly string[]).includes(args.split!)) throw new Error(`--split must be one of ${SPLITS.join(', ')}`);
const rounds = Math.max(1, Number(args.rounds));

type Extract = typeof extractDocument;
const { extractDocument: baseline } = await importFromBuild<{ extractDocument: Extract }>(args.baseline, 'src/local/extract/index.js');
const current = extractDocument;

const directory = args['dev-data']!;
const pages = loadDevPages(directory, args.split as Split).map((page) => ({
  html: readDevPageHtml(directory, page.id),
  url: devPageUrl(directory, page),
}));

const timed = (extract: Extract, page: (typeof pages)[number]) => extractionCpuMs(extract, page.html, page.url);

const loadBefore = os.loadavg()[0]!;
for (const page of pages.slice(0, Number(args.warmup))) {
  await timed(baseline, page);
  await timed(current, page);
}
const results: { round: number; baselineMsPerPage: number; currentMsPerPage: number; ratio: number }[] = [];
for (let round = 0; round < rounds; round += 1) {
  let baselineMs = 0;
  let currentMs = 0;
  for (const [index, page] of pages.entries()) {
    if ((index + round) % 2 === 0) {
      baselineMs += await timed(baseline, page);
      currentMs += await timed(current, page);
    } else {
      currentMs += await timed(current, page);
      baselineMs += await timed(baseline, page);
    }
  }
  const result = { round: round + 1, baselineMsPerPage: baselineMs / pages.length, currentMsPerPage: currentMs / pages.length, ratio: currentMs / baselineMs };
  results.push(result);
  console.log(
    `round ${result.round}: baseline ${result.baselineMsPerPage.toFixed(1)} ms of CPU a page, this build ${result.currentMsPerPage.toFixed(1)}, ratio ${result.ratio.toFixed(3)}`,
  );
}
const total = (key: 'baselineMsPerPage' | 'currentMsPerPage') => results.reduce((sum, result) => sum + result[key], 0);
const ratio = total('currentMsPerPage') / total('baselineMsPerPage');
const machine = machineWithLoad(loadBefore);
console.log(`${args.split} half, ${pages.length} pages, ${rounds} round(s): this build takes ${ratio.toFixed(3)} times the baseline's CPU a page; load ${loadBefore.toFixed(2)} → ${machine.loadAverage1m.after.toFixed(2)}`);
writeFileSync(args.out!, `${JSON.stringify({ benchmark: 'extraction-ab', baseline: resolve(args.baseline), split: args.split, pages: pages.length, date: new Date().toISOString(), machine, rounds: results, ratio }, null, 2)}\n`);
