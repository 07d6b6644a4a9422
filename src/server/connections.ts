/**
 * Connection limits of the HTTP server. A client that opens connections and then stalls (sends
 * nothing, half its headers, part of its body) or sends garbage would otherwise hold a socket and
 * a parser for as long as it likes, and a few hundred such clients tie up the server. Each stall
 * has its own bound (server.* in the config), every refusal gets a status with the spec's error
 * body where HTTP allows one, and each connection closed by a limit is counted by reason.
 *
 * node:http enforces the headers and whole-request timeouts, the idle keep-alive timeout and the
 * header size; this module adds the rest: the first-request timeout, the connection limit (counted
 * here, see `ConnectionGuard.admit`), the answers to malformed and timed-out requests, and a close
 * that does not reset a connection whose client is still sending a body we refused.
 */
import { STATUS_CODES, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Context, Next } from 'koa';
import { ApiError, errorBody } from '../api/errors.js';
import type { GatewayConfig } from '../config/schema.js';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { newLogId } from './middleware.js';

export type ConnectionLimits = Pick<
  GatewayConfig['server'],
  'firstRequestTimeoutMs' | 'headersTimeoutMs' | 'bodyTimeoutMs' | 'keepAliveTimeoutMs' | 'maxHeaderBytes' | 'maxConnections'
>;

export type CloseReason =
  | 'first_request_timeout'
  | 'headers_timeout'
  | 'body_timeout'
  | 'keep_alive_timeout'
  | 'headers_too_large'
  | 'bad_request'
  | 'body_too_large'
  | 'unread_body'
  | 'max_connections';

/**
 * Paths still served on connections over server.maxConnections: an orchestrator that cannot reach
 * /healthz during a flood of connections would restart a process that is working, and /metrics is
 * how the flood is seen.
 */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Connections accepted over server.maxConnections, to answer probes (and everyone else a 503
 * rather than a reset). Past these, new connections are closed at once: the bound on sockets holds.
 */
export const PROBE_RESERVE = 64;

/** How long a connection over the limit may take to send its request: it only ever gets a short answer. */
const OVER_LIMIT_FIRST_REQUEST_MS = 2_000;

/** node:http checks its headers and request timeouts on this interval, at most; its default (30 s) would add up to that to each. */
const MAX_CHECKING_INTERVAL_MS = 1_000;

/** What is known of one connection. */
interface ConnectionState {
  overLimit: boolean;
  requests: number;
  /** The request being received or answered; its `complete` tells a body timeout from a headers one. */
  request?: IncomingMessage;
  response?: ServerResponse;
  /** Set once the connection is being closed by a limit: it is counted once. */
  closing?: CloseReason;
  /** Closing after an answer to a request whose body was not read (see closeWithoutReset). */
  lingering?: boolean;
}

/** node:http's options for these limits. */
export function serverOptions(limits: ConnectionLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.bodyTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    maxHeaderSize: limits.maxHeaderBytes,
    connectionsCheckingInterval: Math.max(10, Math.min(MAX_CHECKING_INTERVAL_MS, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

export class ConnectionGuard {
  private open = 0;
  private readonly states = new WeakMap<Socket, ConnectionState>();

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  /** Watches the server's connections; the server must have been made with serverOptions(limits). */
  attach(server: Server): void {
    server.on('connection', (socket: Socket) => this.accept(socket));
    server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => this.received(request, response));
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => this.refuse(error, socket));
    server.on('timeout', (socket: Socket) => this.idle(socket));
  }

  /**
   * Koa middleware, inside the error handler (requestLifecycle): a connection over the limit gets
   * a 503 except for the probe paths, and is closed after its answer; an answer to a request whose
   * body was not read to its end (a 413, a 415, an unknown path) closes the connection without
   * resetting it.
   */
  admit() {
    return async (ctx: Context, next: Next) => {
      const state = this.states.get(ctx.req.socket);
      try {
        if (state?.overLimit) {
          ctx.set('Connection', 'close');
          if (!PROBE_PATHS.has(ctx.path)) {
            this.record(ctx.req.socket, 'max_connections');
            throw new ApiError(503, 'too many connections; retry shortly', { 'Retry-After': '1' });
          }
        }
        await next();
      } finally {
        if (!ctx.req.complete) this.closeWithoutReset(ctx.req, ctx.res);
      }
    };
  }

  private accept(socket: Socket): void {
    this.open += 1;
    this.metrics.connectionsOpen.set(this.open);
    socket.once('close', () => {
      this.open -= 1;
      this.metrics.connectionsOpen.set(this.open);
    });
    const overLimit = this.open > this.limits.maxConnections;
    const state: ConnectionState = { overLimit, requests: 0 };
    this.states.set(socket, state);
    if (this.open > this.limits.maxConnections + PROBE_RESERVE) {
      this.record(socket, 'max_connections');
      socket.destroy();
      return;
    }
    // The socket's idle timer: until the first request here, then node:http's keep-alive timer
    // between requests (see idle).
    socket.setTimeout(overLimit ? Math.min(OVER_LIMIT_FIRST_REQUEST_MS, this.limits.firstRequestTimeoutMs) : this.limits.firstRequestTimeoutMs);
  }

  /**
   * The socket's idle timer fired. With this 'timeout' listener on the server, node:http leaves
   * the socket to it: closed, unless the first request's headers are under way, which the headers
   * timeout closes with a 408.
   */
  private idle(socket: Socket): void {
    const state = this.states.get(socket);
    if (state?.requests === 0 && socket.bytesRead > 0) {
      socket.setTimeout(0);
      return;
    }
    this.record(socket, state?.requests ? 'keep_alive_timeout' : 'first_request_timeout');
    socket.destroy();
  }

  private received(request: IncomingMessage, response: ServerResponse): void {
    const state = this.states.get(request.socket);
    if (!state) return;
    state.requests += 1;
    state.request = request;
    state.response = response;
    // Not kept past their answer: an idle keep-alive connection would hold them.
    response.once('finish', () => {
      if (state.response !== response) return;
      state.request = undefined;
      state.response = undefined;
    });
    // node:http re-arms the timer with the keep-alive timeout once the answer is out.
    if (state.requests === 1) request.socket.setTimeout(0);
  }

  /** node:http's 'clientError': a request it could not parse, or one not received in time. */
  private refuse(error: NodeJS.ErrnoException, socket: Socket): void {
    const state = this.states.get(socket);
    // A second error on a connection refused already: its answer is on the way, then it is destroyed.
    if (socket.writableEnded && !state?.lingering) return;
    const refusal = refusalOf(error, state);
    // A reset by the client, an error on a connection already closing, or in the middle of an answer: nothing to answer.
    const answering = state?.response !== undefined && state.response.headersSent && !state.response.writableEnded;
    if (!refusal || state?.lingering || !socket.writable || answering) {
      socket.destroy();
      return;
    }
    this.record(socket, refusal.reason);
    const logId = newLogId();
    if (this.logger.enabled('info')) this.logger.info('client error', { log_id: logId, reason: refusal.reason, status: refusal.status, error: error.code });
    const body = JSON.stringify(errorBody(refusal.status, logId, refusal.message));
    socket.end(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Log-Id: ${logId}\r\nConnection: close\r\n\r\n${body}`,
    );
    // What the client sends after its malformed or late request is not read: the connection is done.
    socket.once('finish', () => socket.destroy());
  }

  /**
   * Closes the connection once the answer is out, while the rest of the body is read and dropped.
   * Closing a socket that still has unread bytes resets it, and a client still sending its body
   * then sees the reset, often before it reads the answer. So the answer says Connection: close,
   * the gateway ends its side after it, and the connection is dropped when the client ends its
   * own, or after server.bodyTimeoutMs at most (node:http's request timeout fires first while
   * the body is still coming).
   */
  private closeWithoutReset(request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    const state = this.states.get(socket);
    if (!state || state.lingering || socket.destroyed || response.headersSent) return;
    state.lingering = true;
    response.setHeader('Connection', 'close');
    request.unpipe();
    request.resume();
    // node:http calls destroySoon() when an answer with Connection: close is finished; its own
    // ends the socket and destroys it as soon as that end is flushed, the reset this avoids.
    socket.destroySoon = () => {
      this.record(socket, response.statusCode === 413 ? 'body_too_large' : 'unread_body');
      socket.end();
      const deadline = setTimeout(() => socket.destroy(), this.limits.bodyTimeoutMs);
      deadline.unref();
      socket.once('close', () => clearTimeout(deadline));
    };
  }

  private record(socket: Socket, reason: CloseReason): void {
    const state = this.states.get(socket);
    if (!state || state.closing) return;
    state.closing = reason;
    this.metrics.connectionsClosed.inc({ reason });
  }
}

interface Refusal {
  status: number;
  message: string;
  reason: CloseReason;
}

/** The answer to node:http's client error, or undefined for a connection error (a reset) that gets none. */
function refusalOf(error: NodeJS.ErrnoException, state: ConnectionState | undefined): Refusal | undefined {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    // node:http raises the same error for both timeouts; a request whose headers were read is a body timeout.
    const receivingBody = state?.request !== undefined && !state.request.complete;
    return receivingBody
      ? { status: 408, message: 'request body was not received in time', reason: 'body_timeout' }
      : { status: 408, message: 'request headers were not received in time', reason: 'headers_timeout' };
  }
  // The client ended the connection inside a request: nobody is left to answer.
  if (error.code === 'HPE_INVALID_EOF_STATE') return undefined;
  if (error.code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'request headers are too large', reason: 'headers_too_large' };
  if (error.code?.startsWith('HPE_')) return { status: 400, message: 'malformed HTTP request', reason: 'bad_request' };
  return undefined;
}
