/**
 * Bytes → text. Pages still arrive in legacy encodings (windows-1251, Shift_JIS, GBK…), often
 * declared only in a <meta> tag, sometimes not at all.
 *
 * Order: a byte-order mark (unambiguous, and the HTML standard lets it override everything), the
 * Content-Type charset, a <meta charset> or http-equiv declaration, then — for undeclared bytes —
 * UTF-8 if the bytes are valid UTF-8 (legacy text almost never is), else chardet's statistical guess.
 */
import chardet from 'chardet';
import iconv from 'iconv-lite';

/**
 * How far to look for a <meta> declaration. The HTML standard's prescan stops at 1024 bytes; pages
 * with long <head> comments or inline styles put it later, and browsers find it by reparsing.
 */
const META_PRESCAN_BYTES = 8192;
/** chardet's statistics settle long before this; scanning a whole large page only costs time. */
const DETECTION_SAMPLE_BYTES = 64 * 1024;

const META_CHARSET = /<meta\b[^>]*?\bcharset\s*=\s*["']?\s*([\w.:-]+)/i;

export interface DecodeOptions {
  /** Look for <meta charset> declarations; only HTML has them. */
  html?: boolean;
}

export function decodeBytes(bytes: Uint8Array, contentType: string | null | undefined, options: DecodeOptions = {}): string {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const charset = detectCharset(bytes, contentType, options);
  if (UTF_8.has(charset)) {
    // Node's own decoder, which iconv-lite's UTF-8 codec drives through a stream decoder at several
    // times the cost; a byte-order mark goes, as iconv-lite drops it.
    const text = buffer.toString('utf8');
    return text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text;
  }
  return iconv.decode(buffer, charset);
}

/** The names detectCharset gives UTF-8 by (labels come lower-cased from usableEncoding). */
const UTF_8 = new Set(['utf-8', 'utf8']);
const BYTE_ORDER_MARK = 0xfeff;

/** The encoding of the bytes, as a name iconv-lite knows. */
export function detectCharset(bytes: Uint8Array, contentType: string | null | undefined, options: DecodeOptions = {}): string {
  return (
    byteOrderMark(bytes) ??
    usableEncoding(charsetFromContentType(contentType)) ??
    (options.html === false ? null : usableEncoding(charsetFromMeta(bytes))) ??
    (isValidUtf8(bytes) ? 'utf-8' : null) ??
    usableEncoding(chardet.detect(bytes.subarray(0, DETECTION_SAMPLE_BYTES))) ??
    'utf-8'
  );
}

function byteOrderMark(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return null;
}

export function charsetFromContentType(contentType: string | null | undefined): string | null {
  return /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '')?.[1] ?? null;
}

function charsetFromMeta(bytes: Uint8Array): string | null {
  // Latin-1 maps each byte to one character, so the ASCII markup reads the same whatever the encoding.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, META_PRESCAN_BYTES)).toString('latin1');
  const declared = META_CHARSET.exec(head)?.[1] ?? null;
  // Markup readable as ASCII cannot be UTF-16, whatever it claims; the HTML standard reads UTF-8 then.
  return declared && /^utf-?16/i.test(declared) ? 'utf-8' : declared;
}

function isValidUtf8(bytes: Uint8Array): boolean {
  // A fresh streaming decoder: the sample may end inside a multi-byte sequence, which is not an error.
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, DETECTION_SAMPLE_BYTES), { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** Labels as the HTML standard reads them, limited to encodings iconv-lite can decode. */
function usableEncoding(label: string | null | undefined): string | null {
  if (!label) return null;
  const name = label.trim().toLowerCase();
  // The standard decodes these as windows-1252, their superset: pages declaring Latin-1 routinely
  // use its extra characters (curly quotes, the euro sign).
  if (['iso-8859-1', 'iso8859-1', 'latin1', 'l1', 'us-ascii', 'ascii', 'cp819'].includes(name)) return 'windows-1252';
  // Likewise GB2312 pages are written with GBK's larger repertoire, and Shift_JIS ones with Windows-31J.
  if (name === 'gb2312' || name === 'x-gbk') return 'gbk';
  if (name === 'shift_jis' || name === 'x-sjis' || name === 'sjis') return 'windows-31j';
  return iconv.encodingExists(name) ? name : null;
}
