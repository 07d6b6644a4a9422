/**
 * Which vendor's shape a path answers in, decided before anything can fail: an error can happen
 * before any route runs (an unknown path, a wrong method, a body too large or not JSON), and under
 * /tavily it must still be Tavily's error.
 */
import { specErrors } from './errors.js';
import type { Dialect, DialectFailure, ErrorReply, ErrorScope } from './types.js';

export interface PathScope {
  scope: ErrorScope;
  /** The dialect whose routes the path is among or under, when it is one. */
  dialect: Dialect | undefined;
  renderError(failure: DialectFailure): ErrorReply;
}

const underPrefix = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/**
 * The router matches paths case-insensitively, so scopes do too: /SEARXNG/<key>/search is served,
 * and must be redacted and answered in SearXNG's shape like /searxng/<key>/search. A doubled slash
 * (//searxng/<key>) is no route, but its key must be redacted all the same.
 */
const folded = (path: string) => path.toLowerCase().replace(/\/{2,}/g, '/');

export class ErrorScopes {
  private readonly exact = new Map<string, PathScope>();
  private readonly prefixed: Array<{ prefix: string; scope: PathScope }> = [];
  private readonly fallback: PathScope = { scope: specErrors, dialect: undefined, renderError: specErrors.renderError };

  constructor(dialects: readonly Dialect[], others: readonly ErrorScope[] = []) {
    for (const dialect of dialects) {
      for (const route of dialect.routes) {
        // Paths with parameters sit under their dialect's prefix; the root routes are matched exactly.
        if (!route.path.includes(':')) {
          this.exact.set(folded(route.path), { scope: dialect, dialect, renderError: route.renderError ?? dialect.renderError });
        }
      }
      for (const prefix of dialect.prefixes) this.prefixed.push({ prefix: folded(prefix), scope: { scope: dialect, dialect, renderError: dialect.renderError } });
    }
    for (const scope of others) {
      for (const prefix of scope.prefixes) this.prefixed.push({ prefix: folded(prefix), scope: { scope, dialect: undefined, renderError: scope.renderError } });
    }
    this.prefixed.sort((a, b) => b.prefix.length - a.prefix.length);
  }

  of(path: string): PathScope {
    const key = folded(path);
    return this.exact.get(key) ?? this.prefixed.find(({ prefix }) => underPrefix(key, prefix))?.scope ?? this.fallback;
  }
}
