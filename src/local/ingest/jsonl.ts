/**
 * JSONL ingest: one page per line, {url, title?, text? | html?, datePublished?} (fetchedAt and
 * language are read too when present). Fields given in the line win over what the extractor finds
 * in `html`, so a curated title or date is kept. A bad line is reported with its line number and
 * skipped; the file goes on.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { toIsoUtc } from '../../util/dates.js';
import { isHttpUrl } from '../fetch/url.js';
import type { ExtractedPage, IndexedPage } from '../types.js';
import { FOR_THE_INDEX, extractorOrDefault } from './extractor.js';
import type { PageExtractor } from './extractor.js';
import { toIndexedPage } from './indexed-page.js';
import type { IngestOptions } from './options.js';

export async function* readJsonl(path: string, options: IngestOptions = {}): AsyncGenerator<IndexedPage> {
  const file = createReadStream(path);
  let stream: Readable = file;
  if (/\.gz$/i.test(path)) stream = stream.pipe(createGunzip());
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let extractor: PageExtractor | undefined;
  let lineNumber = 0;
  const ingestedAt = new Date().toISOString();
  for await (const line of lines) {
    lineNumber += 1;
    options.onBytesRead?.(file.bytesRead);
    if (line.trim() === '') continue;
    const location = `line ${lineNumber}`;
    const report = (message: string) => options.onIssue?.({ source: path, location, message });
    let record: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
      record = parsed as Record<string, unknown>;
    } catch (error) {
      report(`not valid JSON (${(error as Error).message})`);
      continue;
    }
    const problem = invalidField(record);
    if (problem) {
      report(problem);
      continue;
    }
    const url = (record.url as string).trim();
    let extracted: ExtractedPage;
    try {
      const fromHtml =
        typeof record.html === 'string' ? await (extractor ??= await extractorOrDefault(options.extractor)).extractHtml(record.html, url, FOR_THE_INDEX) : null;
      extracted = {
        title: nonBlank(record.title) ?? fromHtml?.title ?? null,
        author: fromHtml?.author ?? null,
        text: nonBlank(record.text) ?? fromHtml?.text ?? '',
        datePublished: isoDate(record.datePublished) ?? fromHtml?.datePublished ?? null,
        language: nonBlank(record.language) ?? fromHtml?.language ?? null,
        canonicalUrl: fromHtml?.canonicalUrl ?? null,
        isChallenge: fromHtml?.isChallenge ?? false,
        pageType: fromHtml?.pageType ?? null,
      };
      // An exported page gives its markdown back as it was stored.
      const markdown = nonBlank(record.markdown) ?? fromHtml?.markdown;
      if (markdown) extracted.markdown = markdown;
    } catch (error) {
      report(`the html could not be extracted (${(error as Error).message})`);
      continue;
    }
    const page = toIndexedPage(extracted, { url, fetchedAt: isoDate(record.fetchedAt) ?? ingestedAt });
    if (!page) {
      options.onSkip?.({ source: path, location, message: extracted.isChallenge ? 'a challenge page' : 'no text' });
      continue;
    }
    yield page;
  }
}

/** Why a line cannot be a page, or null when it can. */
function invalidField(record: Record<string, unknown>): string | null {
  if (typeof record.url !== 'string' || record.url.trim() === '') return '"url" is missing';
  if (!isHttpUrl(record.url.trim())) return `"url" is not an http(s) URL: ${JSON.stringify(record.url).slice(0, 200)}`;
  if (nonBlank(record.text) === null && (typeof record.html !== 'string' || record.html.trim() === '')) return 'neither "text" nor "html" is given';
  for (const field of ['title', 'text', 'html', 'markdown', 'language'] as const) {
    if (record[field] !== undefined && record[field] !== null && typeof record[field] !== 'string') return `"${field}" is not a string`;
  }
  for (const field of ['datePublished', 'fetchedAt'] as const) {
    if (record[field] !== undefined && record[field] !== null && isoDate(record[field]) === null) {
      return `"${field}" is not a date: ${JSON.stringify(record[field]).slice(0, 100)}`;
    }
  }
  return null;
}

function nonBlank(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/** ISO 8601 UTC from a date string or epoch milliseconds; null when there is none or it is not a date. */
function isoDate(value: unknown): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? new Date(value).toISOString() : null;
  return typeof value === 'string' ? toIsoUtc(value) : null;
}
