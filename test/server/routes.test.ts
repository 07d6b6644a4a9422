/**
 * routesOf (src/server/routes.ts): a route without parameters is found by its exact method and path,
 * with the context @koa/router gives it; every request is answered as the router alone answers it.
 */
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import test from 'ava';
import Koa, { type Context } from 'koa';
import { routesOf } from '../../src/server/routes.js';

/** What a handler sees of the routing. */
const seen = (name: string) => (ctx: Context) => {
  const routed = ctx as Context & Record<string, any>;
  ctx.body = {
    handler: name,
    matchedRoute: routed._matchedRoute,
    params: routed.params,
    requestParams: (ctx.request as any).params,
    routerPath: routed.routerPath,
    routeMatched: routed.routeMatched,
    matched: (routed.matched as Array<{ path: string }>).map((layer) => layer.path),
    hasRouter: routed.router instanceof Router,
  };
};

function router() {
  const r = new Router();
  r.post('/v1/web-search', async (ctx, next) => {
    ctx.set('X-Before', 'yes');
    await next();
  }, seen('search'));
  r.get('/brave/res/v1/web/search', seen('brave GET'));
  r.post('/brave/res/v1/web/search', seen('brave POST'));
  r.get('/searxng/:key/search', seen('searxng'));
  r.get('/healthz', seen('healthz'));
  r.post('/twice', seen('first'));
  r.post('/twice', seen('second'));
  r.get('/:anything/search', seen('catch-all'));
  return r;
}

async function serve(t: any, useExactRoutes: boolean) {
  const app = new Koa();
  const r = router();
  app.use(useExactRoutes ? routesOf(r) : (r.routes() as unknown as Koa.Middleware));
  app.use(r.allowedMethods() as unknown as Koa.Middleware);
  app.use((ctx) => {
    ctx.body = { fellThrough: true };
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('every request is answered as @koa/router alone answers it', async (t) => {
  const [exact, plain] = await Promise.all([serve(t, true), serve(t, false)]);
  const requests: Array<[string, string]> = [
    ['POST', '/v1/web-search'],
    ['GET', '/v1/web-search'],
    ['PUT', '/v1/web-search'],
    ['OPTIONS', '/v1/web-search'],
    ['HEAD', '/v1/web-search'],
    ['POST', '/V1/Web-Search'],
    ['POST', '/v1/web-search/'],
    ['POST', '/v1/web-search?x=1'],
    ['GET', '/brave/res/v1/web/search'],
    ['POST', '/brave/res/v1/web/search'],
    ['HEAD', '/brave/res/v1/web/search'],
    ['DELETE', '/brave/res/v1/web/search'],
    ['GET', '/searxng/sk-1/search'],
    ['GET', '/healthz'],
    ['HEAD', '/healthz'],
    ['POST', '/twice'],
    ['GET', '/other/search'],
    ['GET', '/nowhere'],
  ];
  for (const [method, path] of requests) {
    const [a, b] = await Promise.all([fetch(`${exact}${path}`, { method }), fetch(`${plain}${path}`, { method })]);
    const label = `${method} ${path}`;
    t.is(a.status, b.status, label);
    for (const header of ['allow', 'x-before', 'content-type']) t.is(a.headers.get(header), b.headers.get(header), `${label}: ${header}`);
    t.is(await a.text(), await b.text(), label);
  }
});

test('a parameterless route reached exactly sees the context the router gives it', async (t) => {
  const exact = await serve(t, true);
  const body = await (await fetch(`${exact}/brave/res/v1/web/search`, { method: 'POST' })).json();
  t.deepEqual(body, {
    handler: 'brave POST',
    matchedRoute: '/brave/res/v1/web/search',
    params: {},
    requestParams: {},
    routerPath: '/brave/res/v1/web/search',
    routeMatched: true,
    matched: ['/brave/res/v1/web/search', '/brave/res/v1/web/search'],
    hasRouter: true,
  });
});
