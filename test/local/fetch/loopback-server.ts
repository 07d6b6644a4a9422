/**
 * A throwaway HTTP server on 127.0.0.1 that records every request it receives, and pages to serve
 * from it, for the local-index tests.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  path: string;
  /** performance.now() when the request arrived. */
  at: number;
  headers: IncomingMessage['headers'];
}

export interface LoopbackServer {
  /** http://127.0.0.1:<port> */
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  /** Paths requested, in arrival order. */
  paths(): string[];
  close(): Promise<void>;
}

export type Handler = (request: IncomingMessage, response: ServerResponse) => void | Promise<void>;

export async function startLoopbackServer(handler: Handler): Promise<LoopbackServer> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    requests.push({ path: request.url ?? '', at: performance.now(), headers: request.headers });
    Promise.resolve(handler(request, response)).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    paths: () => requests.map((request) => request.path),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Serves a fixed set of pages by path; anything else is a 404. */
export function routes(table: Record<string, (response: ServerResponse, request: IncomingMessage) => void>): Handler {
  return (request, response) => {
    const path = request.url ?? '/';
    const route = table[path];
    if (route) route(response, request);
    else {
      response.statusCode = 404;
      response.end('not found');
    }
  };
}

export function html(body: string, contentType = 'text/html; charset=utf-8') {
  return (response: ServerResponse) => {
    response.setHeader('content-type', contentType);
    response.end(body);
  };
}

export function redirect(location: string, status = 302) {
  return (response: ServerResponse) => {
    response.statusCode = status;
    response.setHeader('location', location);
    response.end();
  };
}

/** A page with enough article text for the extractor to find, distinct per topic. */
export function article(topic: string, options: { links?: string[]; head?: string; nav?: string; body?: string } = {}): string {
  const paragraphs = [1, 2, 3]
    .map((n) => `<p>Paragraph ${n} about ${topic}: ${topic} is described here at length, so that this page has a main text of its own that no other page in the test shares, and ${topic} is mentioned again for good measure.</p>`)
    .join('\n');
  const links = (options.links ?? []).map((href) => `<li><a href="${href}">${href}</a></li>`).join('');
  return `<!doctype html><html lang="en"><head><title>${topic}</title>${options.head ?? ''}</head><body>
<nav>${options.nav ?? 'Home | About'}</nav><article><h1>${topic}</h1>${options.body ?? paragraphs}</article><ul>${links}</ul></body></html>`;
}
