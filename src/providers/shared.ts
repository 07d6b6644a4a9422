/**
 * What every upstream adapter needs and none should write again: the options every HTTP provider
 * takes, URL building, credentials headers, reading a reply defensively (a reply of the wrong shape
 * is `garbage`, never an empty result), and the translations of our filters into the forms upstreams
 * understand (site: operators, date ranges).
 */
import { freshnessWindow, type Freshness } from '../api/freshness.js';
import { UpstreamError } from './errors.js';

/** Options every HTTP provider has. */
export interface HttpProviderOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
}

/**
 * The JSON Schema of one provider type's options: `type`, `baseUrl` (default: the provider's public
 * endpoint), `apiKey` (required where the upstream needs one), `timeoutMs`, plus the adapter's own.
 */
export function providerOptionsSchema(
  type: string,
  spec: {
    defaultBaseUrl?: string;
    apiKey: 'required' | 'optional' | 'none';
    timeoutMs?: number;
    properties?: Record<string, object>;
    required?: string[];
  },
): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: [...(spec.apiKey === 'required' ? ['apiKey'] : []), ...(spec.defaultBaseUrl ? [] : ['baseUrl']), ...(spec.required ?? [])],
    properties: {
      type: { const: type },
      baseUrl: { type: 'string', pattern: '^https?://', ...(spec.defaultBaseUrl ? { default: spec.defaultBaseUrl } : {}) },
      ...(spec.apiKey === 'none' ? {} : { apiKey: { type: 'string', minLength: 1 } }),
      timeoutMs: { type: 'integer', minimum: 1, default: spec.timeoutMs ?? 10_000 },
      ...spec.properties,
    },
  };
}

/** The values an error message must never show. */
export const secretsOf = (options: { apiKey?: string | undefined }): string[] => (options.apiKey ? [options.apiKey] : []);

export function bearer(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

/** baseUrl + path, whatever slashes the operator wrote. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** A URL with query parameters; undefined, null and empty values are left out, arrays repeat the key. */
export function withQuery(url: string, params: Record<string, string | number | boolean | undefined | null | readonly string[]>): string {
  const target = new URL(url);
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const item of value) target.searchParams.append(key, item);
    else target.searchParams.set(key, String(value));
  }
  return target.toString();
}

export function expectObject(provider: string, value: unknown, what = 'reply'): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new UpstreamError(provider, 'garbage', `${what} is not a JSON object`);
  }
  return value as Record<string, unknown>;
}

export function expectArray(provider: string, value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new UpstreamError(provider, 'garbage', `reply has no ${what} array`);
  return value;
}

/** The items of an array that are objects; an upstream's stray null or string is skipped, not fatal. */
export function objectsOf(items: readonly unknown[]): Array<Record<string, unknown>> {
  return items.filter((item): item is Record<string, unknown> => !!item && typeof item === 'object' && !Array.isArray(item));
}

export const optionalString = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);
export const optionalNumber = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/**
 * Domain filters as search operators, for engines that understand `site:` but take no filter
 * parameter: `query (site:a.com OR site:b.com) -site:c.com`.
 */
export function withSiteOperators(query: string, includeDomains: readonly string[], excludeDomains: readonly string[]): string {
  const parts = [query];
  if (includeDomains.length === 1) parts.push(`site:${includeDomains[0]}`);
  else if (includeDomains.length > 1) parts.push(`(${includeDomains.map((domain) => `site:${domain}`).join(' OR ')})`);
  for (const domain of excludeDomains) parts.push(`-site:${domain}`);
  return parts.join(' ');
}

/** The inclusive UTC days a freshness value covers at `nowMs`, as YYYY-MM-DD; null for noLimit. */
export function freshnessDays(freshness: Freshness, nowMs: number): { startDay: string; endDay: string } | null {
  if (freshness.kind === 'none') return null;
  if (freshness.kind === 'dates') return { startDay: freshness.startDay, endDay: freshness.endDay };
  const window = freshnessWindow(freshness, nowMs)!;
  return { startDay: isoDay(window.fromMs), endDay: isoDay(nowMs) };
}

/** The freshness window as ISO 8601 instants, for APIs that filter on timestamps; null for noLimit. */
export function freshnessInstants(freshness: Freshness, nowMs: number): { start: string; end: string | null } | null {
  const window = freshnessWindow(freshness, nowMs);
  if (!window) return null;
  return {
    start: new Date(window.fromMs).toISOString(),
    end: Number.isFinite(window.toMs) ? new Date(window.toMs).toISOString() : null,
  };
}

export const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
