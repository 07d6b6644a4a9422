/**
 * Request bodies. Nearly every POST is an `application/json` body with no Content-Encoding, and
 * that one case is read here, in one pass: a size check on Content-Length, the chunks gathered up
 * to the limit, one UTF-8 decode and one JSON.parse. It answers exactly as koa-bodyparser (with
 * co-body and raw-body) answers the same bytes, which every other body still goes to: form fields,
 * the other JSON media types, compressed bodies. Those layers took 12% of a cache hit's CPU
 * (docs/benchmarks.md, "Gateway overhead").
 */
import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import bodyParser from 'koa-bodyparser';
import { ApiError } from '../api/errors.js';

export type BodyType = 'json' | 'form';

/**
 * Content-Type values read here: those JSON clients send, each of which koa-bodyparser also reads
 * as JSON. Any other value, `application/json` with other parameters included, goes to it.
 */
const PLAIN_JSON = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
  'application/json; charset=UTF-8',
  'application/json;charset=UTF-8',
]);

/**
 * A request body of one of `types`, at most `limit` ("16kb", or bytes), on `ctx.request.body`: the
 * parsed JSON (an object or an array), the form fields, or {} without a body. A body of another
 * type is a 415 before it is read.
 */
export function readBody(limit: string | number, types: readonly BodyType[]) {
  const maxBytes = byteLimit(limit);
  const acceptsJson = types.includes('json');
  const described = types.map((type) => (type === 'json' ? 'application/json' : 'application/x-www-form-urlencoded')).join(' or ');
  const otherBodies = bodyParser({
    enableTypes: [...types],
    // Every +json type passes the 415 check below, so each is read as JSON, not only koa-bodyparser's five.
    extendTypes: { json: ['+json'] },
    jsonLimit: String(limit),
    formLimit: String(limit),
    strict: true,
    // Called with the errors of reading the body only, never with those of the route after it.
    onerror: (error, ctx) => {
      throw bodyReadError(error, ctx.req.headers['content-encoding']);
    },
  });
  return async function readRequestBody(ctx: Context, next: Next) {
    const { headers } = ctx.req;
    const contentType = headers['content-type'];
    const encoding = headers['content-encoding'];
    if (acceptsJson && contentType !== undefined && PLAIN_JSON.has(contentType) && (encoding === undefined || encoding === 'identity')) {
      ctx.request.body = await readJson(ctx.req, maxBytes);
      return next();
    }
    // Koa's is() answers null only for a request without a body.
    if (ctx.request.is('*/*') !== null) {
      const type = ctx.request.type;
      const json = type === 'application/json' || type.endsWith('+json');
      const accepted = (json && acceptsJson) || (type === 'application/x-www-form-urlencoded' && types.includes('form'));
      if (!accepted) {
        throw new ApiError(415, `Content-Type must be ${described}${ctx.get('content-type') ? `, not ${ctx.get('content-type')}` : ''}`);
      }
      const charset = ctx.request.charset.toLowerCase();
      if (!UTF8_CHARSETS.has(charset)) throw new ApiError(415, `unsupported charset "${charset}"; request bodies are read as UTF-8`);
      if (encoding !== undefined) ctx.req.headers['content-encoding'] = contentCoding(encoding);
    }
    return otherBodies(ctx, next);
  };
}

/**
 * Charsets read, all as UTF-8: JSON is UTF-8 (RFC 8259 §8.1), forms are sent in it, and US-ASCII is
 * a subset of it. Any other would be decoded wrongly, so it is refused.
 */
const UTF8_CHARSETS = new Set(['', 'utf-8', 'utf8', 'us-ascii']);

/** The content codings koa-bodyparser (inflation) undoes. */
const CONTENT_CODINGS = new Set(['identity', 'gzip', 'deflate', 'br']);

/** The coding, in the lower case inflation compares (RFC 9110 §8.4.1: the names are case-insensitive); a 415 for any other. */
function contentCoding(header: string): string {
  const coding = header.trim().toLowerCase();
  if (!CONTENT_CODINGS.has(coding)) throw new ApiError(415, 'unsupported Content-Encoding; gzip, deflate, br or identity are read');
  return coding;
}

/**
 * An error of reading a body: raw-body's and co-body's carry their status (middleware.ts,
 * toApiError, words them); zlib's carry none and mean that the client's bytes do not inflate.
 */
function bodyReadError(error: unknown, coding: string | undefined): unknown {
  const status = (error as { status?: unknown } | null)?.status;
  if (status === undefined && coding !== undefined && coding !== 'identity') {
    return new ApiError(400, `request body is not valid ${coding} data`);
  }
  return error;
}

const tooLarge = () => new ApiError(413, 'request body is too large');

/**
 * The body of an uncompressed JSON request, parsed as co-body parses it in strict mode. The errors
 * are those the shared error handler makes of raw-body's and co-body's (middleware.ts, toApiError).
 */
function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  // raw-body checks the declared length before reading anything, and leaves the body unread.
  const declared = req.headers['content-length'];
  const length = declared ? ~~declared : null;
  if (length !== null && length > limit) return Promise.reject(tooLarge());
  if (!req.readable) return Promise.reject(new Error('request body stream is not readable'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const settle = (error: unknown, body?: unknown) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onError);
      if (error === undefined) return resolve(body);
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) settle(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => {
      if (length !== null && received !== length) return settle(new ApiError(400, 'request size did not match content length'));
      let body: unknown;
      try {
        body = parseStrictJson(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8'));
      } catch {
        return settle(new ApiError(400, 'request body is not a valid JSON object'));
      }
      settle(undefined, body);
    };
    const onAborted = () => settle(new ApiError(400, 'request body was not received completely'));
    const onError = (error: Error) => settle(error);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onError);
  });
}

/** co-body's strict mode: an empty body is {}; anything else must be a JSON object or array. */
const OBJECT_OR_ARRAY = /^[\x20\x09\x0a\x0d]*(\[|\{)/;

/**
 * JSON text as co-body reads it in strict mode: a leading byte order mark dropped (its UTF-8 decoder
 * does), {} for an empty body, and a SyntaxError for anything but an object or array, or for one
 * that holds a `__proto__` key (as @hapi/bourne refuses it).
 */
export function parseStrictJson(text: string): unknown {
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json === '') return {};
  if (!OBJECT_OR_ARRAY.test(json)) throw new SyntaxError('invalid JSON, only supports object and array');
  const parsed = JSON.parse(json) as unknown;
  if (PROTO_KEY.test(json)) refuseProtoKeys(parsed as object);
  return parsed;
}

/** A `"__proto__":` key, escapes included: only then is the parsed value scanned (@hapi/bourne's test). */
const PROTO_KEY =
  /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

function refuseProtoKeys(root: object): void {
  const pending: object[] = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (Object.prototype.hasOwnProperty.call(node, '__proto__')) throw new SyntaxError('Object contains forbidden prototype property');
    for (const value of Object.values(node)) if (value && typeof value === 'object') pending.push(value as object);
  }
}

/** A limit in bytes: a number, or a string such as "16kb" read as the `bytes` package reads it (1 kb = 1024 bytes). */
export function byteLimit(limit: string | number): number {
  if (typeof limit === 'number') return limit;
  const match = /^((?:-|\+)?\d+(?:\.\d+)?) *(kb|mb|gb|tb|pb)$/i.exec(limit);
  if (!match) return parseInt(limit, 10);
  const unit = { kb: 2 ** 10, mb: 2 ** 20, gb: 2 ** 30, tb: 2 ** 40, pb: 2 ** 50 }[match[2]!.toLowerCase() as 'kb'];
  return Math.floor(unit * parseFloat(match[1]!));
}
