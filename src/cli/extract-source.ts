/**
 * Where `searchgate extract` gets a page's bytes: a local file (gzip'd or not) or an http(s) URL
 * fetched with the service's own fetcher; and, for batches, which files a directory holds.
 */
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { FetchPolicy } from '../local/fetch/policy.js';
import { UsageError } from './args.js';

/** Larger local files are refused rather than read into memory. */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;

const CONTENT_TYPE_BY_EXTENSION: Record<string, string> = {
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xhtml': 'application/xhtml+xml',
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/markdown',
};

export interface Source {
  bytes: Uint8Array;
  url: string;
  contentType: string | null;
}

export const isHttpTarget = (target: string) => /^https?:\/\//i.test(target);

export async function isDirectoryTarget(target: string): Promise<boolean> {
  return !isHttpTarget(target) && Boolean((await stat(target).catch(() => null))?.isDirectory());
}

/** A file that cannot be read is a UsageError: for one page it is the caller's mistake, not the page's. */
export async function readSource(path: string, pageUrl: string | undefined): Promise<Source> {
  const absolute = resolve(path);
  let size: number;
  try {
    size = (await stat(absolute)).size;
  } catch {
    throw new UsageError(`cannot read ${path}`);
  }
  if (size > MAX_FILE_BYTES) throw new UsageError(`${path} is larger than ${MAX_FILE_BYTES} bytes`);
  let bytes: Uint8Array;
  try {
    bytes = await readFile(absolute);
  } catch (error) {
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let name = absolute.toLowerCase();
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes, { maxOutputLength: MAX_FILE_BYTES });
    } catch (error) {
      throw new UsageError(`cannot decompress ${path}: ${(error as Error).message}`);
    }
    name = name.replace(/\.gz$/, '');
  }
  return {
    bytes,
    url: pageUrl ?? pathToFileURL(absolute).href,
    contentType: CONTENT_TYPE_BY_EXTENSION[extname(name)] ?? null,
  };
}

export async function fetchSource(url: string, policy: FetchPolicy): Promise<Source> {
  // The fetcher (undici) is a tenth of a second to load, which a batch of files does not need.
  const { safeFetch } = await import('../local/fetch/safe-fetch.js');
  let resource;
  try {
    resource = await safeFetch(url, policy, new AbortController().signal);
  } catch (error) {
    throw new Error(`cannot fetch ${url}: ${(error as Error).message}`);
  }
  if (resource.status !== 200) throw new Error(`${url} answered HTTP ${resource.status}`);
  return { bytes: resource.body, url: resource.url, contentType: resource.contentType };
}

/** What a directory walk picks up: the kinds readSource knows, gzip'd or not; anything else there is not a page. */
export function isPageFileName(name: string): boolean {
  const lower = name.toLowerCase().replace(/\.gz$/, '');
  return Object.hasOwn(CONTENT_TYPE_BY_EXTENSION, extname(lower));
}

/** A file to extract, or a directory that could not be listed (it stands for the pages it would have given). */
export interface ListedPath {
  path: string;
  error?: string;
}

/**
 * The page files under a directory, depth first, each directory's entries in code-point order so
 * that two runs list the same files in the same order. Symbolic links are not followed (a link
 * back up the tree would never end). One directory's names are held at a time, not the tree's.
 */
export async function* pageFilesUnder(directory: string): AsyncGenerator<ListedPath> {
  let entries: Dirent[];
  try {
    entries = await readdir(directory, { withFileTypes: true });
  } catch (error) {
    yield { path: directory, error: `cannot list ${directory}: ${(error as Error).message}` };
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* pageFilesUnder(path);
    else if (entry.isFile() && isPageFileName(entry.name)) yield { path };
  }
}
