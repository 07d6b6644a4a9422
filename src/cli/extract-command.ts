/**
 * `searchgate extract <file|dir|url>... [--json] [--jsonl] [--format text|markdown] [--url <page-url>] [--workers N]
 * [--allow-private]`: what the service extracts from pages (title, author, date, language, page type, main text), through the same
 * ExtractorPool the service runs, so its caps and time limit apply here too.
 *
 * One file or URL: the page as text (or --json). Several, a directory, or --jsonl: a batch, one JSON
 * line per page (extract-batch.ts).
 *
 * Exit codes, one page: 0 text extracted; 1 nothing extracted, a challenge page, or the page could
 * not be had; 2 usage error (bad arguments, unreadable file). A batch: 0 every page was read and
 * extracted (some may have no text: their lines say so); 1 at least one page failed (its line has an
 * `error`) or the output was closed before the end; 2 usage error.
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { ExtractorPool } from '../local/extract/pool.js';
import { fetchPolicy, type FetchPolicy } from '../local/fetch/policy.js';
import type { ExtractedPage } from '../local/types.js';
import { integerOption, UsageError, usageFailure } from './args.js';
import { runBatch } from './extract-batch.js';
import { fetchSource, isDirectoryTarget, isHttpTarget, readSource, type Source } from './extract-source.js';

const USAGE = `usage: searchgate extract <file|dir|url>... [--json] [--jsonl] [--format text|markdown] [--url <page-url>]
                          [--workers N] [--allow-private]

Prints the title, author, date, language, page type and main text of pages, as the service extracts them.
  <file>           a local .html, .htm, .xhtml, .pdf, .txt or .md file, gzip'd or not
  <dir>            every such file under the directory, subdirectories included, in name order
                   (symbolic links not followed; other files skipped)
  <url>            an http(s) URL, fetched with the service's fetcher (public addresses only)
  --json           one page: print the extracted page as JSON
  --jsonl          JSON lines even for one page (implied by several inputs or a directory)
  --format         the main text as plain text (default) or also as markdown (headings, lists, tables,
                   code): printed instead of the text for one page, a "markdown" field in JSON
  --url            the page's address, for one local file (resolves relative links, dates in the path);
                   without it, a saved page is read as at the canonical address it declares, if any
  --workers N      extraction threads for a batch (default: one per CPU, ${availableParallelism()} here)
  --allow-private  let URLs reach private, loopback and link-local addresses (refused by default)

A batch writes one JSON line per page on stdout, in input order:
  {"input": <as given or found>, "url": ..., "title": ..., "text": ..., "datePublished": ..., "language": ..., ...}
  {"input": ..., "error": <why the page could not be read, fetched or extracted>}
and a summary on stderr (with a progress line while it runs, on a terminal).

exit codes: one page: 0 ok, 1 nothing extracted or a challenge page, 2 usage error;
            a batch: 0 every page extracted (with or without text), 1 some page failed or the output
            was closed before the end (| head), 2 usage error`;

export async function main(argv: string[]): Promise<number> {
  let parsed;
  let workers: number;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        json: { type: 'boolean' },
        jsonl: { type: 'boolean' },
        format: { type: 'string', default: 'text' },
        url: { type: 'string' },
        workers: { type: 'string' },
        'allow-private': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    });
    workers = integerOption(parsed.values.workers, '--workers', 1) ?? availableParallelism();
  } catch (error) {
    return usageError((error as Error).message);
  }
  if (parsed.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const format = parsed.values.format;
  if (format !== 'text' && format !== 'markdown') return usageError('--format must be text or markdown');
  const markdown = format === 'markdown';
  const targets = parsed.positionals;
  if (targets.length === 0) return usageError('expected at least one file, directory or URL');
  const pageUrl = parsed.values.url;
  const oneTargetIsDirectory = targets.length === 1 && (await isDirectoryTarget(targets[0]!));
  if (pageUrl !== undefined && (targets.length !== 1 || oneTargetIsDirectory || isHttpTarget(targets[0]!))) {
    return usageError('--url goes with a single local file');
  }
  if (pageUrl !== undefined && !isHttpTarget(pageUrl)) return usageError('--url must be an http(s) URL');
  const policy = fetchPolicy({ allowPrivateNetworks: parsed.values['allow-private'] });

  const single = targets.length === 1 && !parsed.values.jsonl && !oneTargetIsDirectory;
  if (single) return extractSingle(targets[0]!, pageUrl, policy, parsed.values.json ?? false, markdown);

  const summary = await runBatch(targets, {
    workers,
    markdown,
    fetchPolicy: policy,
    ...(pageUrl !== undefined ? { pageUrl } : {}),
    output: process.stdout,
    log: process.stderr,
  });
  return summary.failed > 0 || summary.outputError !== null ? 1 : 0;
}

const usageError = (message: string) => usageFailure('searchgate extract', message, USAGE);

async function extractSingle(target: string, pageUrl: string | undefined, policy: FetchPolicy, asJson: boolean, markdown: boolean): Promise<number> {
  let source: Source;
  try {
    source = isHttpTarget(target) ? await fetchSource(target, policy) : await readSource(target, pageUrl);
  } catch (error) {
    if (error instanceof UsageError) return usageError(error.message);
    process.stderr.write(`searchgate extract: ${(error as Error).message}\n`);
    return 1;
  }

  const pool = new ExtractorPool({ size: 1 });
  let page: ExtractedPage;
  try {
    page = await pool.extract(source.bytes, { url: source.url, contentType: source.contentType }, { markdown });
  } finally {
    await pool.close();
  }

  process.stdout.write(asJson ? `${JSON.stringify({ url: source.url, ...page }, null, 2)}\n` : formatPage(page));
  if (page.isChallenge) {
    process.stderr.write('searchgate extract: this is a challenge page (bot check or CAPTCHA wall), not the page itself\n');
    return 1;
  }
  if (!page.text) {
    process.stderr.write('searchgate extract: no main text found\n');
    return 1;
  }
  return 0;
}

function formatPage(page: ExtractedPage): string {
  const header = [
    `title: ${page.title ?? '-'}`,
    `date: ${page.datePublished ?? '-'}`,
    `language: ${page.language ?? '-'}`,
    `author: ${page.author ?? '-'}`,
    `type: ${page.pageType ?? '-'}`,
    `canonical: ${page.canonicalUrl ?? '-'}`,
  ].join('\n');
  const body = page.markdown ?? page.text;
  return body ? `${header}\n\n${body}\n` : `${header}\n`;
}
