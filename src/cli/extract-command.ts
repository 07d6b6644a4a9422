/**
 * `searchgate extract <file|url> [--json] [--url <page-url>]`: prints what the service extracts from
 * one page (title, date, language, main text), through the same ExtractorPool the service runs, so
 * its caps and time limit apply here too.
 *
 * Exit codes: 0 text extracted; 1 nothing extracted, a challenge page, or the page could not be had;
 * 2 usage error (bad arguments, unreadable file).
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { DEFAULT_FETCH_POLICY, safeFetch } from '../local/fetch/index.js';
import { ExtractorPool } from '../local/extract/index.js';
import type { ExtractedPage } from '../local/types.js';
import { UsageError, usageFailure } from './args.js';

const USAGE = `usage: searchgate extract <file|url> [--json] [--format text|markdown] [--url <page-url>]

Prints the title, author, date, language, page type and main text of one page, as the service extracts it.
  <file>    a local .html, .html.gz, .pdf or .txt file
  <url>     an http(s) URL, fetched with the service's fetcher (public addresses only)
  --json    print the extracted page as JSON
  --format  the main text as plain text (default) or as markdown (headings, lists, tables, code)
  --url     the page's address, for a local file (resolves relative links, dates in the path)

exit codes: 0 ok, 1 nothing extracted or a challenge page, 2 usage error`;

/** Larger local files are refused rather than read into memory. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

const CONTENT_TYPE_BY_EXTENSION: Record<string, string> = {
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xhtml': 'application/xhtml+xml',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
};

interface Source {
  bytes: Uint8Array;
  url: string;
  contentType: string | null;
}

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { json: { type: 'boolean' }, format: { type: 'string', default: 'text' }, url: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (error) {
    return usageError((error as Error).message);
  }
  if (parsed.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (parsed.positionals.length !== 1) return usageError('expected exactly one file or URL');
  const format = parsed.values.format;
  if (format !== 'text' && format !== 'markdown') return usageError('--format must be text or markdown');
  const target = parsed.positionals[0]!;

  let source: Source;
  try {
    source = /^https?:\/\//i.test(target) ? await fetchSource(target) : await readSource(target, parsed.values.url);
  } catch (error) {
    if (error instanceof UsageError) return usageError(error.message);
    process.stderr.write(`searchgate extract: ${(error as Error).message}\n`);
    return 1;
  }

  const pool = new ExtractorPool({ size: 1 });
  let page: ExtractedPage;
  try {
    page = await pool.extract(source.bytes, { url: source.url, contentType: source.contentType }, { markdown: format === 'markdown' });
  } finally {
    await pool.close();
  }

  process.stdout.write(parsed.values.json ? `${JSON.stringify({ url: source.url, ...page }, null, 2)}\n` : formatPage(page));
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

const usageError = (message: string) => usageFailure('searchgate extract', message, USAGE);

async function readSource(path: string, pageUrl: string | undefined): Promise<Source> {
  const absolute = resolve(path);
  let size: number;
  try {
    size = (await stat(absolute)).size;
  } catch {
    throw new UsageError(`cannot read ${path}`);
  }
  if (size > MAX_FILE_BYTES) throw new UsageError(`${path} is larger than ${MAX_FILE_BYTES} bytes`);
  let bytes: Uint8Array = await readFile(absolute);
  let name = absolute.toLowerCase();
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: MAX_FILE_BYTES });
    } catch (error) {
      throw new UsageError(`cannot decompress ${path}: ${(error as Error).message}`);
    }
    name = name.replace(/\.gz$/, '');
  }
  if (pageUrl !== undefined && !/^https?:\/\//i.test(pageUrl)) throw new UsageError('--url must be an http(s) URL');
  return {
    bytes,
    url: pageUrl ?? pathToFileURL(absolute).href,
    contentType: CONTENT_TYPE_BY_EXTENSION[extname(name)] ?? null,
  };
}

async function fetchSource(url: string): Promise<Source> {
  let resource;
  try {
    resource = await safeFetch(url, DEFAULT_FETCH_POLICY, new AbortController().signal);
  } catch (error) {
    throw new Error(`cannot fetch ${url}: ${(error as Error).message}`);
  }
  if (resource.status !== 200) throw new Error(`${url} answered HTTP ${resource.status}`);
  return { bytes: resource.body, url: resource.url, contentType: resource.contentType };
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
