/**
 * WARC ingest (plain or gzipped per record, as Common Crawl publishes them): response records of
 * HTTP 200 with an HTML or PDF payload become pages, under their WARC-Target-URI, fetched at their
 * WARC-Date. Everything else (requests, metadata, redirects, images…) is skipped.
 */
import { createReadStream } from 'node:fs';
import { WARCParser } from 'warcio';
import type { WARCRecord } from 'warcio';
import { isHttpUrl } from '../fetch/url.js';
import type { IndexedPage } from '../types.js';
import { FOR_THE_INDEX, extractorOrDefault } from './extractor.js';
import type { PageExtractor } from './extractor.js';
import { toIndexedPage } from './indexed-page.js';
import type { IngestOptions } from './options.js';

/** Larger payloads are skipped; Common Crawl itself truncates at 1 MiB. */
const MAX_PAYLOAD_BYTES = 20 * 1024 * 1024;
const INDEXABLE_TYPES = new Set(['text/html', 'application/xhtml+xml', 'application/pdf']);

export async function* readWarc(path: string, options: IngestOptions = {}): AsyncGenerator<IndexedPage> {
  const file = createReadStream(path);
  const parser = new WARCParser(file);
  let extractor: PageExtractor | undefined;
  for await (const record of parser) {
    options.onBytesRead?.(file.bytesRead);
    if (record.warcType !== 'response') continue;
    const url = record.warcTargetURI?.replace(/^<(.*)>$/, '$1') ?? '';
    const location = `record at byte ${parser.offset}${url ? ` (${url})` : ''}`;
    const skip = (message: string) => options.onSkip?.({ source: path, location, message });
    const report = (message: string) => options.onIssue?.({ source: path, location, message });
    if (!isHttpUrl(url)) {
      report('WARC-Target-URI is not an http(s) URL');
      continue;
    }
    const status = Number(record.httpHeaders?.statusCode);
    if (status !== 200) {
      skip(`HTTP ${Number.isFinite(status) ? status : 'status unknown'}`);
      continue;
    }
    const contentType = payloadType(record);
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    if (!INDEXABLE_TYPES.has(mediaType)) {
      skip(`not HTML or PDF (${mediaType || 'no content type'})`);
      continue;
    }
    let payload: Buffer;
    try {
      const read = await readPayload(record);
      if (!read) {
        skip(`payload larger than ${MAX_PAYLOAD_BYTES} bytes`);
        continue;
      }
      payload = read;
    } catch (error) {
      report(`the payload could not be read (${(error as Error).message})`);
      continue;
    }
    try {
      extractor ??= await extractorOrDefault(options.extractor);
      const extracted = await extractor.extract(payload, { url, contentType }, FOR_THE_INDEX);
      const page = toIndexedPage(extracted, { url, fetchedAt: fetchedAt(record) });
      if (page) yield page;
      else skip(extracted.isChallenge ? 'a challenge page' : 'no text');
    } catch (error) {
      report(`the payload could not be extracted (${(error as Error).message})`);
    }
  }
}

/** Common Crawl's own identification of the payload is more reliable than what the server claimed. */
function payloadType(record: WARCRecord): string {
  const identified = record.warcHeader('WARC-Identified-Payload-Type');
  const declared = record.httpHeaders?.headers.get('content-type') ?? '';
  if (!identified) return declared;
  // Keep the server's charset parameter: it is the best hint for decoding.
  const charset = /;\s*charset=[^;]+/i.exec(declared)?.[0] ?? '';
  return `${identified}${charset}`;
}

/** The decoded payload (chunked transfer and content encoding undone), or null when over the cap. */
async function readPayload(record: WARCRecord): Promise<Buffer | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of record) {
    size += chunk.length;
    if (size > MAX_PAYLOAD_BYTES) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function fetchedAt(record: WARCRecord): string {
  const date = new Date(record.warcDate ?? '');
  return Number.isNaN(date.getTime()) ? new Date().toISOString() : date.toISOString();
}
