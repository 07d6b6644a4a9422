/**
 * Summarizes a V8 .cpuprofile (as written by `node --cpu-prof`, e.g. by `npm run bench -- --profile`):
 * self time by function and by origin (a package under node_modules, a file of ours, Node internals,
 * GC, idle), and inclusive time of the functions that matter.
 *
 *   node dist/bench/cpuprofile-summary.js bench/results/cpuprofile.tmp/gateway-uncached.cpuprofile [--top 40]
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: 'string', default: '40' } }, allowPositionals: true });
const top = Number(values.top);
if (positionals.length === 0) {
  process.stderr.write('usage: node dist/bench/cpuprofile-summary.js FILE.cpuprofile [--top N]\n');
  process.exit(64);
}

function origin(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return '(gc)';
  if (functionName === '(idle)') return '(idle)';
  if (functionName === '(program)') return '(program: native, unattributed)';
  if (functionName === '(root)') return '(root)';
  if (!url) return '(native / V8 builtins)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `npm:${pkg[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/')[0]}`;
  const ours = /\/dist\/(.+)$/.exec(url);
  if (ours) return ours[1]!;
  return url;
}

const label = (frame: CallFrame) =>
  `${frame.functionName || '(anonymous)'} ${frame.url ? `${frame.url.replace(/^.*\/(node_modules|dist)\//, '$1/')}:${frame.lineNumber + 1}` : ''}`.trim();

for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  let total = 0;
  let idle = 0;
  const bySelfFunction = new Map<string, number>();
  const bySelfOrigin = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    total += us;
    if (node.callFrame.functionName === '(idle)') idle += us;
    const key = label(node.callFrame);
    bySelfFunction.set(key, (bySelfFunction.get(key) ?? 0) + us);
    const where = origin(node.callFrame);
    bySelfOrigin.set(where, (bySelfOrigin.get(where) ?? 0) + us);
    // Inclusive: count each distinct function once per stack.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const name = label(frame);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + us);
    }
  }
  const busy = total - idle;
  const pct = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const msOf = (us: number) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  const print = (title: string, map: Map<string, number>, n: number, filter: (key: string) => boolean = () => true) => {
    process.stdout.write(`\n${title}\n`);
    for (const [key, us] of [...map].filter(([key]) => filter(key)).sort((a, b) => b[1] - a[1]).slice(0, n)) {
      process.stdout.write(`${msOf(us)} ${pct(us)}  ${key}\n`);
    }
  };
  process.stdout.write(`# ${file}\nwall ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s (percentages are of busy time)\n`);
  print('self time by origin', bySelfOrigin, top, (key) => key !== '(idle)');
  print('self time by function', bySelfFunction, top, (key) => !key.startsWith('(idle)'));
  print('inclusive time, our code (dist/src)', inclusive, top, (key) => key.includes('dist/src/') || key.includes('/src/'));
  print('inclusive time, packages', inclusive, top, (key) => key.includes('node_modules/'));
}
