/**
 * The MCP server at /mcp (spec §1, §5.7): Streamable HTTP, built on the official MCP TypeScript SDK,
 * with the API's Bearer keys, allowance, logs and metrics.
 *
 * Stateless: every POST gets a fresh SDK server and transport, and no session id is issued, so any
 * replica behind a load balancer can answer any request and nothing lives between them. Replies are
 * plain JSON rather than an SSE stream: a tool call has one answer, and no progress to stream.
 *
 * Each tool call runs the HTTP API's own steps: validate → (authenticated already, at the transport)
 * → allowance → cache → provider chain → normalize, through src/server/operations.ts. Failures come
 * back as tool errors whose text names the HTTP status and says what to do, as plainly as the API.
 */
import Router from '@koa/router';
import type { Context } from 'koa';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { rerankResults, webSearchEnvelope } from '../api/envelopes.js';
import { ApiError } from '../api/errors.js';
import { authenticateRequest, jsonBody, logMilliseconds, newLogId, originOf, toApiError, type RequestState } from '../server/middleware.js';
import { rerankOperation, webSearchOperation, type OperationContext } from '../server/operations.js';
import type { Services } from '../server/services.js';
import type { Principal } from '../state/keys.js';
import type { ErrorScope } from '../dialects/types.js';
import { RERANK, WEB_SEARCH, toolDefinitions } from './tools.js';
import { renderRerank, renderWebSearch } from './render.js';

const SERVER_INFO = { name: 'searchgate', version: '0.1.0' };
const INSTRUCTIONS =
  'searchgate offers web_search (web results with source URLs, snippets or page text, filtered by date and site) ' +
  'and rerank (relevance scores from 0 to 1 for candidate texts). Both count against the daily allowance of the API key in use.';

const STATUS_MEANING: Record<number, string> = {
  400: 'invalid arguments',
  401: 'authentication failed',
  403: 'access denied',
  429: 'limit reached',
  500: 'server error',
  502: 'search provider failure',
  503: 'service unavailable',
  504: 'timed out',
};

/**
 * Failures at the transport (a missing or refused key, a body that is not JSON, a wrong method) as
 * JSON-RPC errors, which MCP clients read. A 401 names the protected-resource metadata in
 * WWW-Authenticate (the MCP authorization spec, RFC 9728 §5.1), so that a client learns a key is
 * needed and how to send it.
 */
export function mcpErrorScope(path: string): ErrorScope {
  return {
    name: 'mcp',
    prefixes: [path],
    renderError({ error, kind, logId, origin }) {
      const unauthorized = error.status === 401;
      const challenge = [
        'Bearer realm="searchgate"',
        ...(unauthorized && kind !== 'missing_key' ? ['error="invalid_token"', `error_description="${headerSafe(error.message)}"`] : []),
        `resource_metadata="${origin}${PROTECTED_RESOURCE_METADATA}${path}"`,
      ].join(', ');
      return {
        status: error.status,
        headers: unauthorized ? { 'WWW-Authenticate': challenge } : ({} as Record<string, string>),
        body: {
          jsonrpc: '2.0',
          error: { code: jsonRpcCode(error.status), message: error.message, data: { status: error.status, log_id: logId } },
          id: null,
        },
      };
    },
  };
}

/** A quoted-string of a header: printable ASCII, no quotes or backslashes ("…" becomes "..."). */
const headerSafe = (text: string) => text.replaceAll('…', '...').replace(/[^\x20-\x7e]|["\\]/g, '');

/** -32700 for a body that is not JSON, -32600 for another bad request, -32001 (server-defined) for refusals. */
function jsonRpcCode(status: number): number {
  if (status === 400) return -32700;
  if (status === 401 || status === 403) return -32001;
  if (status >= 500) return -32603;
  return -32600;
}

const PROTECTED_RESOURCE_METADATA = '/.well-known/oauth-protected-resource';

export function createMcpRouter(services: Services): Router {
  const { config } = services;
  const router = new Router();

  // RFC 9728: where a client learns how to present a credential to the MCP endpoint. searchgate has
  // no OAuth authorization server: its keys are static Bearer keys, made in the dashboard or the CLI.
  const metadata = (ctx: Context) => {
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = {
      resource: `${originOf(ctx)}${config.mcp.path}`,
      resource_name: 'searchgate',
      bearer_methods_supported: ['header'],
      resource_documentation: `${originOf(ctx)}/v1/openapi.json`,
    };
  };
  router.get(PROTECTED_RESOURCE_METADATA, metadata);
  router.get(`${PROTECTED_RESOURCE_METADATA}${config.mcp.path}`, metadata);
  const tools = toolDefinitions({ maxDocuments: config.rerank.maxDocuments });

  router.post(
    config.mcp.path,
    ...jsonBody(config.server.maxBodyBytes),
    async (ctx: Context) => {
      // At the transport: a missing or bad key is an HTTP 401 in the spec's error body, before any MCP.
      const principal = await authenticateRequest(ctx, services.authenticator);
      const server = new Server(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
      server.setRequestHandler(CallToolRequestSchema, (request) =>
        callTool(services, ctx, principal, request.params.name, request.params.arguments ?? {}),
      );
      // The web-standard transport hands back a Response once every answer is ready (JSON mode), so
      // Koa sends it like any other reply: the shared middleware logs, measures and error-wraps it
      // without knowing MCP exists, and the allowance headers set during a tool call are still in time.
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      try {
        const reply = await transport.handleRequest(webRequestOf(ctx), { parsedBody: ctx.request.body });
        ctx.status = reply.status;
        reply.headers.forEach((value, name) => ctx.set(name, value));
        ctx.body = reply.body ? await reply.text() : null;
      } finally {
        await server.close();
      }
    },
  );
  // No sessions and no server-initiated messages: GET (an SSE stream) and DELETE (end a session) do
  // not apply, which the Streamable HTTP transport answers with 405.
  router.all(config.mcp.path, (ctx) => {
    throw new ApiError(405, `${ctx.method} is not supported on ${config.mcp.path}: this MCP server is stateless and answers POST only`, {
      Allow: 'POST',
    });
  });
  return router;
}

async function callTool(services: Services, ctx: Context, principal: Principal, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  const started = performance.now();
  const logId = newLogId();
  const timeoutMs = Math.min(services.config.mcp.toolTimeoutMs, services.config.server.requestTimeoutMs);
  // The allowance headers go on the HTTP reply of the call that was charged, as on the API.
  const context: OperationContext = {
    principal,
    timeoutMs,
    onCharged: (headers) => ctx.set(headers),
  };
  let outcome: { status: number; cache?: string; provider?: string; error?: string } = { status: 200 };
  try {
    if (name === WEB_SEARCH) {
      const request = services.validator.parseWebSearch(args);
      const { outcome: search, cacheStatus } = await webSearchOperation(services, request, context);
      outcome = { status: 200, cache: cacheStatus, provider: search.provider };
      const { data } = webSearchEnvelope(logId, request, search, `${ctx.protocol}://${ctx.host}/v1/`);
      const structured = {
        query: request.query,
        results: data.webPages.value,
        totalEstimatedMatches: data.webPages.totalEstimatedMatches,
        someResultsRemoved: data.webPages.someResultsRemoved,
      };
      return { content: [{ type: 'text', text: renderWebSearch(structured) }], structuredContent: structured, _meta: { log_id: logId } };
    }
    if (name === RERANK) {
      const request = services.validator.parseRerank(args);
      services.rerank.resolveModel(request.model);
      const { outcome: ranking, cacheStatus } = await rerankOperation(services, request, context);
      outcome = { status: 200, cache: cacheStatus, provider: ranking.provider };
      const structured = { model: ranking.model, results: rerankResults(request, ranking) };
      return { content: [{ type: 'text', text: renderRerank(structured, request.documents) }], structuredContent: structured, _meta: { log_id: logId } };
    }
    throw new ApiError(400, `unknown tool "${name}"; this server has ${WEB_SEARCH} and ${RERANK}`);
  } catch (error) {
    const failure = toApiError(error, services.logger, logId);
    outcome = { status: failure.status, error: failure.message };
    return toolError(failure, logId);
  } finally {
    recordToolCall(services, ctx, name, logId, started, outcome);
  }
}

/**
 * The transport reads only the method, the headers and the already-parsed body; the URL's origin is
 * never looked at (the DNS-rebinding check is off), so a fixed one spares us trusting the Host header.
 */
function webRequestOf(ctx: Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.headers)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, item);
  }
  return new Request(new URL(ctx.url, 'http://mcp.invalid'), { method: ctx.method, headers });
}

/** The status, what it means and the API's own message; for limits, when to retry. */
function toolError(failure: ApiError, logId: string): CallToolResult {
  const retryAfter = failure.headers['Retry-After'];
  const text = [
    `Error ${failure.status} (${STATUS_MEANING[failure.status] ?? 'request failed'}): ${failure.message}`,
    ...(retryAfter ? [`Retry after ${retryAfter} s.`] : []),
    `log_id: ${logId}`,
  ].join('\n');
  return { isError: true, content: [{ type: 'text', text }], _meta: { log_id: logId, status: failure.status } };
}

function recordToolCall(
  services: Services,
  ctx: Context,
  tool: string,
  logId: string,
  started: number,
  outcome: { status: number; cache?: string; provider?: string; error?: string },
) {
  const seconds = (performance.now() - started) / 1000;
  const known = tool === WEB_SEARCH || tool === RERANK ? tool : 'unknown';
  services.metrics.mcpToolCalls.inc({ tool: known, status: String(outcome.status) });
  services.metrics.mcpToolDuration.observe({ tool: known }, seconds);
  const state = ctx.state as RequestState;
  if (services.logger.enabled('info')) {
    services.logger.info('mcp tool call', {
      log_id: logId,
      request_log_id: state.logId,
      tool,
      status: outcome.status,
      duration_ms: logMilliseconds(seconds),
      cache: outcome.cache,
      provider: outcome.provider,
      key: state.keyName,
      account: state.account,
      error: outcome.error,
    });
  }
}
