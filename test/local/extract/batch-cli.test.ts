/** `searchgate extract` over many pages: files, directories and URLs in, one JSON line per page out. */
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runCli } from '../../helpers/cli.js';
import { article, html, routes, startLoopbackServer } from '../fetch/loopback-server.js';

interface PageLine {
  input: string;
  url?: string;
  title?: string;
  text?: string;
  language?: string;
  error?: string;
}

const run = (...args: string[]) => runCli(['extract', ...args]);

const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

function parseLines(stdout: string): PageLine[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as PageLine);
}

/** A directory of hand-written pages; `files` maps a relative path to its contents. */
function pageDirectory(files: Record<string, string | Uint8Array>): string {
  const root = mkdtempSync(join(tmpdir(), 'searchgate-extract-batch-'));
  for (const [path, contents] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), contents);
  }
  return root;
}

/** gzip's magic bytes followed by bytes that are no deflate stream. */
const BROKEN_GZIP = Uint8Array.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02]);

test('a directory is read recursively, in name order: one line per page file, a broken file an error line, exit 1', async (t) => {
  const root = pageDirectory({
    'b-lighthouse.html': article('lighthouse keepers'),
    'a-orchard.htm': article('apple orchards'),
    'nested/c-ferry.html.gz': gzipSync(article('river ferries')),
    'nested/d-broken.html.gz': BROKEN_GZIP,
    'nested/notes.json': '{"not": "a page"}',
    'e-minutes.txt': 'Harbour board minutes\n\nThe board met on Tuesday and approved the new mooring fees.',
  });
  const { code, stdout, stderr } = await run(root);

  t.is(code, 1);
  const lines = parseLines(stdout);
  t.deepEqual(
    lines.map((line) => line.input),
    ['a-orchard.htm', 'b-lighthouse.html', 'e-minutes.txt', 'nested/c-ferry.html.gz', 'nested/d-broken.html.gz'].map((path) => join(root, path)),
  );
  const [orchard, lighthouse, minutes, ferry, broken] = lines;
  t.like(orchard, { title: 'apple orchards', language: 'en' });
  t.regex(orchard!.text!, /Paragraph 1 about apple orchards/);
  t.notRegex(orchard!.text!, /Home \| About/);
  t.like(lighthouse, { title: 'lighthouse keepers', url: `file://${join(root, 'b-lighthouse.html')}` });
  t.like(minutes, { title: 'Harbour board minutes' });
  t.regex(ferry!.text!, /river ferries is described here/);
  t.is(broken!.text, undefined);
  t.regex(broken!.error!, /cannot decompress/);
  // Not a terminal: no progress line, only the closing summary.
  t.regex(stderr, /^extract: 5 pages, [\d.]+ pages\/s, 1 failed, 0 without text in [\d.]+ s \([\d.]+ s of CPU\)\n$/);
});

test('files given one by one keep their order and names; a page without text is a line, not a failure', async (t) => {
  const topics = ['tide tables', 'salt marshes', 'sea kayaks', 'harbour seals', 'fishing quotas', 'coastal erosion', 'storm surges', 'shipwrecks', 'buoys', 'lighthouses'];
  const root = pageDirectory({
    ...Object.fromEntries(topics.map((topic, index) => [`page-${index}.html`, article(topic)])),
    'empty.html': '<!doctype html><html><head><title>Nothing here</title></head><body></body></html>',
  });
  // Reverse name order: the output must follow the command line, not the file names.
  const inputs = [...topics.keys()].reverse().map((index) => join(root, `page-${index}.html`));
  const { code, stdout, stderr } = await run(...inputs, join(root, 'empty.html'), '--workers', '2');

  t.is(code, 0, stderr);
  const lines = parseLines(stdout);
  t.deepEqual(
    lines.map((line) => line.input),
    [...inputs, join(root, 'empty.html')],
  );
  for (const [position, index] of [...topics.keys()].reverse().entries()) {
    t.is(lines[position]!.title, topics[index], `line ${position} names ${inputs[position]} but holds another page`);
    t.regex(lines[position]!.text!, new RegExp(`Paragraph 1 about ${topics[index]}`));
  }
  t.like(lines.at(-1), { title: 'Nothing here', text: '' });
  t.regex(stderr, /extract: 11 pages, [\d.]+ pages\/s, 0 failed, 1 without text/);
});

test('--format markdown gives each line its main text as markdown too, beside the plain text', async (t) => {
  const body = '<h2>Tide tables</h2><p>High water comes twice a day, and the tables say when, for every port along the coast.</p><ul><li>spring tides</li><li>neap tides</li></ul>';
  const root = pageDirectory({ 'a.html': article('tides', { body }), 'b.html': article('buoys') });
  const { code, stdout, stderr } = await run(join(root, 'a.html'), join(root, 'b.html'), '--format', 'markdown');
  t.is(code, 0, stderr);
  const [tides, buoys] = parseLines(stdout) as Array<PageLine & { markdown?: string }>;
  t.regex(tides!.markdown!, /^## Tide tables$/m);
  t.regex(tides!.markdown!, /^[-*] +spring tides$/m);
  t.regex(tides!.text!, /High water comes twice a day/);
  t.notRegex(tides!.text!, /##/);
  t.regex(buoys!.markdown!, /Paragraph 1 about buoys/);
  const plain = parseLines((await run(join(root, 'a.html'), '--jsonl')).stdout) as Array<PageLine & { markdown?: string }>;
  t.is(plain[0]!.markdown, undefined, 'no markdown unless asked for');
});

test('URLs are fetched with the service fetcher: an HTTP error is an error line; loopback needs --allow-private', async (t) => {
  const server = await startLoopbackServer(routes({ '/alpha': html(article('alpine meadows')), '/beta': html(article('beekeeping')) }));
  t.teardown(() => server.close());
  const urls = [`${server.origin}/alpha`, `${server.origin}/missing`, `${server.origin}/beta`];

  const fetched = await run(...urls, '--allow-private');
  t.is(fetched.code, 1);
  const lines = parseLines(fetched.stdout);
  t.deepEqual(
    lines.map((line) => line.input),
    urls,
  );
  t.like(lines[0], { url: urls[0], title: 'alpine meadows' });
  t.regex(lines[1]!.error!, /answered HTTP 404/);
  t.like(lines[2], { url: urls[2], title: 'beekeeping' });

  const requestsBefore = server.requests.length;
  const refused = await run(...urls);
  t.is(refused.code, 1);
  t.true(parseLines(refused.stdout).every((line) => line.error !== undefined && /cannot fetch/.test(line.error)));
  t.is(server.requests.length, requestsBefore);
});

test('--jsonl gives one page a JSON line too; missing inputs are error lines; bad options are usage errors', async (t) => {
  const root = pageDirectory({ 'one.html': article('estuaries') });
  const one = await run(join(root, 'one.html'), '--jsonl');
  t.is(one.code, 0);
  t.like(parseLines(one.stdout), [{ input: join(root, 'one.html'), title: 'estuaries' }]);

  const missing = await run(join(root, 'one.html'), join(root, 'absent.html'));
  t.is(missing.code, 1);
  t.like(parseLines(missing.stdout), [{ title: 'estuaries' }, { input: join(root, 'absent.html'), error: `cannot read ${join(root, 'absent.html')}` }]);

  t.is((await run(join(root, 'one.html'), join(root, 'one.html'), '--url', 'https://coast.example/a')).code, 2);
  t.is((await run(root, '--url', 'https://coast.example/a')).code, 2);
  t.is((await run(join(root, 'one.html'), '--jsonl', '--url', 'coast.example/a')).code, 2);
  t.is((await run(root, '--workers', '0')).code, 2);
});

test('a reader that goes away after the first line (| head -1) stops the batch: a summary saying so, exit 1, no crash', async (t) => {
  const root = pageDirectory(Object.fromEntries(Array.from({ length: 60 }, (_, index) => [`page-${String(index).padStart(2, '0')}.html`, article(`topic ${index}`)])));
  const child = spawn(process.execPath, [CLI, 'extract', root, '--workers', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // Closing our end of the pipe is what `head` does once it has its line.
  child.stdout.once('data', () => child.stdout.destroy());
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));

  t.is(code, 1);
  // 60 pages take seconds to extract, so the pipe is closed long before the last line is due.
  t.regex(stderr, /^extract: \d+ pages, .*; stopped, the output failed: write EPIPE\n$/);
});

test('on a terminal, stderr shows a status line redrawn in place, ending with the summary', async (t) => {
  const root = pageDirectory({ 'a.html': article('dunes'), 'b.html': article('cliffs'), 'c.html': article('coves') });
  const output = join(root, 'pages.jsonl');
  // script(1) runs the command on a pseudo-terminal and copies what the terminal shows to its stdout;
  // the command's own stdout goes to a file, so the terminal shows only stderr.
  const quote = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;
  const command = `${quote(process.execPath)} ${quote(CLI)} extract ${quote(root)} > ${quote(output)}`;
  const { stdout: terminal } = await promisify(execFile)('script', ['-qec', command, '/dev/null']);

  t.is(parseLines(readFileSync(output, 'utf8')).length, 3);
  t.regex(terminal, /^extract: 1 pages, [\d.]+ pages\/s, 0 failed, 0 without text\r\x1b\[K/);
  t.regex(terminal, /\r\x1b\[Kextract: 3 pages, [\d.]+ pages\/s, 0 failed, 0 without text in [\d.]+ s \([\d.]+ s of CPU\)\r\n$/);
});

test("a batch's main thread loads no parser and no fetcher: its workers extract, and only a URL needs undici", (t) => {
  // A resolve hook refuses the extractor's and the fetcher's packages, in a fresh process; importing
  // the command then fails if anything on its static imports reaches them.
  const refused = ['linkedom', '@mozilla/readability', 'html-to-text', 'turndown', 'undici'];
  const hooks = `export async function resolve(specifier, context, next) {
    if (${JSON.stringify(refused)}.some((name) => specifier === name || specifier.startsWith(name + '/'))) throw new Error('loaded ' + specifier);
    return next(specifier, context);
  }`;
  const command = fileURLToPath(new URL('../../../src/cli/extract-command.js', import.meta.url));
  const script = `
    const { register } = await import('node:module');
    register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}));
    try { await import(${JSON.stringify(command)}); process.stdout.write('ok'); }
    catch (error) { process.stdout.write(String(error.message)); }
  `;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  t.is(output, 'ok');
});
