/** A gateway instance: Koa app, its services, and an HTTP server that drains on close. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { createDashboardRouter } from '../dashboard/routes.js';
import { createMcpRouter, mcpErrorScope } from '../mcp/server.js';
import { ConnectionGuard, serverOptions } from './connections.js';
import { IdleCollector } from './idle-collector.js';
import { requestLifecycle } from './middleware.js';
import { createRouter, routesOf } from './routes.js';
import { createServices, type ServiceOptions, type Services } from './services.js';

export interface Gateway {
  app: Koa;
  services: Services;
  server: Server;
  listen(port: number, host?: string): Promise<AddressInfo>;
  /** Stops accepting connections, lets in-flight requests finish (up to graceMs), then resolves. */
  close(graceMs?: number): Promise<void>;
}

export function createGateway(options: ServiceOptions): Gateway {
  const services = createServices(options);
  const app = new Koa();
  const router = createRouter(services);
  const scopes = services.errorScopes(services.config.mcp.enabled ? [mcpErrorScope(services.config.mcp.path)] : []);
  const connections = new ConnectionGuard(services.config.server, services.metrics, services.logger);
  app.use(requestLifecycle(services.metrics, services.logger, scopes));
  app.use(connections.admit());
  app.use(routesOf(router));
  app.use(router.allowedMethods());
  if (services.config.mcp.enabled) app.use(createMcpRouter(services).routes());
  if (services.config.dashboard.enabled) {
    const dashboard = createDashboardRouter(services);
    app.use(dashboard.routes());
    app.use(dashboard.allowedMethods());
  }
  // Errors are answered by requestLifecycle; Koa's own handler would only print them again.
  app.silent = true;

  const server = createServer(serverOptions(services.config.server), app.callback());
  connections.attach(server);
  const idleCollector = new IdleCollector({
    quietMs: services.config.server.idleCollectMs,
    onCollected: (before, after) => {
      services.metrics.idleCollections.inc();
      services.logger.debug('idle collection', { heap_used_before_mb: megabytes(before), heap_used_after_mb: megabytes(after) });
    },
  });

  return {
    app,
    services,
    server,
    async listen(port, host = '127.0.0.1') {
      await services.start();
      idleCollector.start();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      });
    },
    close(graceMs = options.config.server.shutdownGraceMs) {
      services.draining = true;
      idleCollector.stop();
      return new Promise((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          void services.close().then(() => resolve());
        });
        server.closeIdleConnections();
      });
    },
  };
}

const megabytes = (bytes: number) => Math.round(bytes / 2 ** 20);
