/**
 * HTTP/1.1 on a raw socket: a request written byte for byte, so that its framing is exactly as given
 * (or broken), and what the client sees: the answer, who closed the connection, and when.
 */
import net from 'node:net';

export interface RawAnswer {
  /** Every complete answer, in order; the fields below are the first's. */
  answers: Array<{ status: number; headers: Record<string, string>; body: any }>;
  /** The status of the first answer; NaN when none came. */
  status: number;
  /** Its headers, by lower-case name. */
  headers: Record<string, string>;
  /** Its body: parsed JSON, else the text; undefined when there is none. */
  body: any;
  /** The server ended the connection (its FIN came) before the client gave up or saw an error. */
  endedByServer: boolean;
  /** The code of an error the client saw (EPIPE, ECONNRESET), if any. */
  error?: string;
  /** Whether that error came before the whole answer had arrived. */
  errorBeforeAnswer: boolean;
  /** From connect to the socket's close. */
  closedAfterMs: number;
}

export interface RawOptions {
  /**
   * Sent again and again after the request, until the server ends the connection: a client that
   * keeps sending its body without reading the answer.
   */
  keepSending?: Buffer;
  /** Sent once the first answer is in: the next request on a keep-alive connection. */
  afterFirstAnswer?: Buffer | string;
  /** The client destroys the socket after this, if it is still open. */
  giveUpMs?: number;
}

/** Opens a connection to `url`'s host, writes `request` and resolves once the connection is closed. */
export function rawExchange(url: string, request: Buffer | string, options: RawOptions = {}): Promise<RawAnswer> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let endedByServer = false;
    let error: string | undefined;
    let errorBeforeAnswer = false;
    let sender: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => socket.destroy(), options.giveUpMs ?? 30_000);
    let next = options.afterFirstAnswer;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (next !== undefined && parseAnswers(Buffer.concat(chunks)).length > 0) {
        socket.write(next);
        next = undefined;
      }
    });
    socket.on('end', () => {
      if (error === undefined) endedByServer = true;
    });
    socket.on('error', (cause: NodeJS.ErrnoException) => {
      error = cause.code ?? cause.message;
      errorBeforeAnswer = parseAnswers(Buffer.concat(chunks)).length === 0;
    });
    socket.on('close', () => {
      clearTimeout(giveUp);
      clearInterval(sender);
      const answers = parseAnswers(Buffer.concat(chunks));
      const answer = answers[0];
      resolve({
        answers,
        status: answer?.status ?? NaN,
        headers: answer?.headers ?? {},
        body: answer?.body,
        endedByServer,
        error,
        errorBeforeAnswer,
        closedAfterMs: performance.now() - started,
      });
    });
    socket.write(request);
    const more = options.keepSending;
    if (more) {
      sender = setInterval(() => {
        if (endedByServer || !socket.writable) clearInterval(sender);
        else if (socket.writableLength < more.length * 4) socket.write(more);
      }, 2);
    }
  });
}

/** The complete answers in `bytes`, one after the other. */
function parseAnswers(bytes: Buffer): RawAnswer['answers'] {
  const answers: RawAnswer['answers'] = [];
  let rest = bytes;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) return answers;
    const [statusLine, ...lines] = rest.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const payload = rest.subarray(headEnd + 4, headEnd + 4 + length);
    if (payload.length < length) return answers;
    const text = payload.toString('utf8');
    let body: any = text || undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the text
    }
    answers.push({ status, headers, body });
    rest = rest.subarray(headEnd + 4 + length);
  }
}

/** A request's head, as lines joined by CRLF and ended by an empty line. */
export const requestHead = (requestLine: string, headers: Record<string, string>) =>
  `${[requestLine, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join('\r\n')}\r\n\r\n`;

/** A connection that writes `bytes` (maybe nothing) and then stalls; `closed` settles when either side closes it. */
export async function stalledConnection(url: string, bytes: string | Buffer = '') {
  const { port, hostname } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => {});
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  if (bytes.length) socket.write(bytes);
  return { socket, closed, isOpen: () => !socket.destroyed && socket.readyState === 'open' };
}
