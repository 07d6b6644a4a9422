/**
 * Reading a body under two caps: bytes on the wire and bytes after decompression. The content codings
 * are undone here rather than by the HTTP client so that the decompressed size is counted as it is
 * produced: a few kilobytes of gzip can expand to gigabytes, and the read stops at the cap instead.
 */
import { Readable } from 'node:stream';
import type { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { FetchError } from './errors.js';

export interface BodyLimits {
  maxBytes: number;
  maxDecodedBytes: number;
}

/** Content-Encoding values in the order they were applied; "identity" and blanks dropped. */
export function parseContentEncoding(header: string | string[] | undefined): string[] {
  const value = Array.isArray(header) ? header.join(',') : header ?? '';
  return value
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
}

export async function readCappedBody(
  source: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer | Uint8Array>,
  contentEncodings: readonly string[],
  limits: BodyLimits,
  url: string,
  signal?: AbortSignal,
): Promise<Buffer> {
  // Build the decoders first: an unknown coding fails before anything is read.
  const decoders = [...contentEncodings].reverse().map((coding) => decoderFor(coding, url));
  let wireBytes = 0;
  async function* countWireBytes(chunks: AsyncIterable<Buffer | Uint8Array>) {
    for await (const chunk of chunks) {
      wireBytes += chunk.length;
      if (wireBytes > limits.maxBytes) throw new FetchError('too_large', `reply larger than ${limits.maxBytes} bytes`, url);
      yield chunk;
    }
  }
  const decoded: Buffer[] = [];
  let decodedBytes = 0;
  async function collect(chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      decodedBytes += chunk.length;
      if (decodedBytes > limits.maxDecodedBytes) {
        throw new FetchError('too_large', `reply decompresses to more than ${limits.maxDecodedBytes} bytes`, url);
      }
      decoded.push(chunk);
    }
  }
  const stages = [Readable.from(source), countWireBytes, ...decoders, collect];
  try {
    // The stage list is heterogeneous; pipeline checks it at run time.
    await (pipeline as (...args: unknown[]) => Promise<void>)(...stages, signal ? { signal } : {});
  } catch (error) {
    if (isZlibError(error)) throw new FetchError('bad_encoding', `reply is not valid ${contentEncodings.join(', ')}`, url);
    throw error;
  }
  return Buffer.concat(decoded);
}

function decoderFor(coding: string, url: string): Transform {
  // Sync flush at the end: servers often cut the last bytes of a compressed stream, and what came
  // before is still worth reading (browsers are as lenient).
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'deflate':
      // Unzip accepts both the zlib-wrapped form the RFC means and, unlike Inflate, gzip sent under
      // the wrong name.
      return zlib.createUnzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      throw new FetchError('bad_encoding', `unsupported Content-Encoding "${coding}"`, url);
  }
}

/** zlib's codes are Z_*; brotli's are its decoder's error names, prefixed "ERR__" (ERR__ERROR_FORMAT_…). */
function isZlibError(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('Z_') || code.startsWith('ERR__') || code.startsWith('ERR_BROTLI'));
}
