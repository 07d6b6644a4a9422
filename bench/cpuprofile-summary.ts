/**
 * Summarizes a V8 .cpuprofile (as written by `node --cpu-prof`, e.g. by `npm run bench -- --profile`):
 * where a gateway request's time goes, by stage of the request; then self time by origin (a package
 * under node_modules, a file of ours, Node internals, GC) and by function, and inclusive time of our
 * functions.
 *
 * The V8 profiler samples wall time: when the process is descheduled inside a syscall (typically
 * `writev` to a loopback socket, which wakes the peer process), the wait is charged to that native
 * function. Those samples are shown apart and left out of the stage percentages, as is start-up.
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

/** Stages of a gateway request, each recognized by the frames of its own code. */
const STAGES: Array<[string, (frame: CallFrame) => boolean]> = [
  ['socket writes (syscall, incl. time descheduled)', (f) => f.url === '' && /^(writev|writeBuffer|writeUtf8String|writeLatin1String)$/.test(f.functionName)],
  ['garbage collection', (f) => f.functionName === '(garbage collector)'],
  ['normalize results (shapeResult, passesFilters: URL and date parsing)', (f) => /^(shapeResult|passesFilters)$/.test(f.functionName) && f.url.includes('/gateway/search.')],
  ['read upstream reply body (readLimited)', (f) => f.functionName === 'readLimited'],
  ['undici client: upstream request/response', (f) => f.url.includes('node_modules/undici/')],
  ['callJson: AbortSignal.any/timeout, JSON.parse of the reply', (f) => f.functionName === 'callJson'],
  ['retry loop, upstream metrics', (f) => f.url.includes('node_modules/p-retry/') || (f.url.includes('/gateway/upstream.') && /^(withRetries|retryWaitMs|once|record|pRetry\.retries)$/.test(f.functionName))],
  ['provider: build request, map reply (searchgate-compatible)', (f) => f.url.includes('/vendors/')],
  ['Deadline (AbortSignal.timeout)', (f) => f.url.includes('/gateway/deadline.')],
  ['request body parsing (server/body.ts; koa-bodyparser, co-body, raw-body, bourne, type-is)', (f) => /node_modules\/(koa-bodyparser|co-body|raw-body|@hapi\/bourne|type-is|iconv-lite|inflation)\//.test(f.url) || f.functionName === 'requireJsonBody' || f.url.includes('/server/body.')],
  ['validation (ajv, parseWebSearch)', (f) => f.functionName === 'parseWebSearch' || f.url.includes('node_modules/ajv/')],
  ['authentication (sha256 of the key)', (f) => /^(authenticate|digestKey|operatorKeyDigest|principalOf|bearerToken)$/.test(f.functionName)],
  ['cache key (sha256) and cache lookup', (f) => (/^(searchCacheKey|sha256)$/.test(f.functionName) && /\/server\/(routes|operations)\./.test(f.url)) || f.url.includes('/state/responseCache.') || f.url.includes('node_modules/lru-cache/')],
  ['response envelope (webSearchEnvelope, its stored bytes)', (f) => f.url.includes('/api/envelopes.')],
  ['metrics (prom-client)', (f) => f.url.includes('node_modules/prom-client/')],
  ['Koa respond (JSON.stringify of the body, headers, res.end)', (f) => f.functionName === 'respond' && f.url.includes('node_modules/koa/')],
  ['lifecycle middleware (log id, in-flight gauge, log line)', (f) => /^(lifecycle|newLogId|routeTemplate)$/.test(f.functionName) && f.url.includes('/server/middleware.')],
  ['search chain (firstThatAnswers, searchWith loop)', (f) => f.url.includes('/gateway/search.') || f.url.includes('/gateway/upstream.')],
  ['node:http server (parser, IncomingMessage, ServerResponse)', (f) => /^node:_http_(server|common|incoming|outgoing)$/.test(f.url)],
  ['Koa and router machinery (context, compose, delegates, @koa/router)', (f) => /node_modules\/(koa|koa-compose|@koa\/router|delegates|koa-is-json|statuses|on-finished|ee-first|mime-types|cache-content-type|http-errors|vary|content-disposition|only|encodeurl|escape-html|fresh|accepts|negotiator)\//.test(f.url)],
  ['route handler (routes.ts)', (f) => f.url.includes('/server/routes.')],
];

/**
 * Start-up work (module loading and compiling) under any frame of the stack. The bench's own
 * profiles start after start-up; one taken with --cpu-prof holds it, and it is set apart like writes.
 */
const STARTUP = 'start-up (module loading, compiling)';
const isStartup = (frame: CallFrame) => frame.url.startsWith('node:internal/modules/');
/** The bench starts and stops the profiler from inside the gateway (node:inspector): its own work is set apart too. */
const PROFILER = 'the profiler itself (node:inspector session)';
const isProfiler = (frame: CallFrame) => frame.url === 'node:inspector';

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
  const byStage = new Map<string, number>();
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
    if (node.callFrame.functionName !== '(idle)') {
      const stack: CallFrame[] = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!.callFrame);
      // The frame nearest the leaf that belongs to a stage decides: it is the code doing the work.
      let stage: string | undefined = stack.some(isStartup) ? STARTUP : stack.some(isProfiler) ? PROFILER : undefined;
      for (const frame of stage ? [] : stack) {
        stage = STAGES.find(([, test]) => test(frame))?.[0];
        if (stage) break;
      }
      stage ??= `other: ${origin(node.callFrame)}`;
      byStage.set(stage, (byStage.get(stage) ?? 0) + us);
    }
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
  process.stdout.write(`# ${file}\nwall ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s\n`);
  const setApart = new Set([STAGES[0]![0], STARTUP, PROFILER]);
  const onCpu = busy - [...setApart].reduce((sum, stage) => sum + (byStage.get(stage) ?? 0), 0);
  process.stdout.write(`\nby stage of the request (percent of busy time without socket writes, start-up and the profiler: ${(onCpu / 1e6).toFixed(1)} s)\n`);
  for (const [stage, stageUs] of [...byStage].sort((a, b) => b[1] - a[1])) {
    const share = setApart.has(stage) ? '     —' : `${((100 * stageUs) / onCpu).toFixed(1).padStart(5)}%`;
    process.stdout.write(`${msOf(stageUs)} ${share}  ${stage}\n`);
  }
  process.stdout.write('\n(the sections below: percent of busy time)\n');
  print('self time by origin', bySelfOrigin, top, (key) => key !== '(idle)');
  print('self time by function', bySelfFunction, top, (key) => !key.startsWith('(idle)'));
  print('inclusive time, our code (dist/src)', inclusive, top, (key) => key.includes('dist/src/') || key.includes('/src/'));
  print('inclusive time, packages', inclusive, top, (key) => key.includes('node_modules/'));
}
