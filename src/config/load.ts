import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { DEFAULT_RERANK_MODEL } from '../api/schemas.js';
import { builtInProviderTypes, type ProviderType } from '../vendors/registry.js';
import { configSchema, type GatewayConfig } from './schema.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface ResolvedConfig extends GatewayConfig {
  /** Changes whenever what shapes an answer does (answersFingerprint); part of every cache key. */
  version: string;
}

export const DEFAULT_CONFIG_PATH = 'config/default.yaml';
/** The implicit provider and model name of the embedded reranker. */
export const LOCAL_RERANKER = 'local-reranker';

/** Reads SEARCHGATE_CONFIG (or config/default.yaml when present; an empty config otherwise). */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  providerTypes: Record<string, ProviderType> = builtInProviderTypes,
): ResolvedConfig {
  const path = env.SEARCHGATE_CONFIG ?? (existsSync(DEFAULT_CONFIG_PATH) ? DEFAULT_CONFIG_PATH : undefined);
  let raw: unknown = {};
  if (path !== undefined) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new ConfigError(`cannot read config file ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    try {
      raw = (path.endsWith('.json') ? JSON.parse(text) : parseYaml(text)) ?? {};
    } catch (error) {
      throw new ConfigError(`config file ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
    }
  }
  return resolveConfig(raw, env, providerTypes);
}

const keyName = (path: string) => path.replace(/^\//, '').replaceAll('/', '.').replace(/\.(\d+)(?=\.|$)/g, '[$1]');

function describe(error: ErrorObject, prefix = ''): string {
  const at = keyName(prefix + error.instancePath);
  switch (error.keyword) {
    case 'required':
      return `config key ${at ? at + '.' : ''}${String(error.params.missingProperty)} is required`;
    case 'additionalProperties':
      return `config key ${at ? at + '.' : ''}${String(error.params.additionalProperty)} is not a known setting`;
    default:
      return `config key ${at || '(root)'} ${error.message ?? 'is invalid'}`;
  }
}

/** Validates a parsed config, fills defaults, interpolates ${ENV} and checks every provider reference. */
export function resolveConfig(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
  providerTypes: Record<string, ProviderType> = builtInProviderTypes,
): ResolvedConfig {
  const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: false });
  const config = interpolate(structuredClone(raw ?? {}), env, '') as GatewayConfig;
  const validate = ajv.compile(configSchema);
  if (!validate(config)) throw new ConfigError(describe(validate.errors![0]!));

  // The embedded default is always there under the name `local` unless the operator redefines it.
  config.providers.local ??= { type: 'local', ...(env.SEARCHGATE_INDEX_DIR ? { directory: env.SEARCHGATE_INDEX_DIR } : {}) };
  // So is the embedded reranker. Only the implicit default model may be absent (rerank then answers
  // 503 and the log says how to fetch it); a model the operator names must load or the start fails.
  config.providers[LOCAL_RERANKER] ??= {
    type: 'local-reranker',
    ...(env.SEARCHGATE_RERANK_MODEL ? { model: env.SEARCHGATE_RERANK_MODEL } : { optional: true }),
  };
  if (Object.keys(config.rerank.models).length === 0) config.rerank.models[LOCAL_RERANKER] = { chain: [LOCAL_RERANKER] };

  for (const [name, provider] of Object.entries(config.providers)) {
    const type = providerTypes[provider.type];
    if (!type) {
      throw new ConfigError(
        `config key providers.${name}.type: unknown provider type "${provider.type}" (known: ${Object.keys(providerTypes).join(', ')})`,
      );
    }
    const validateOptions = ajv.compile(type.optionsSchema);
    if (!validateOptions(provider)) throw new ConfigError(describe(validateOptions.errors![0]!, `/providers/${name}`));
  }

  const requireProvider = (key: string, name: string, operation: 'search' | 'content' | 'rerank') => {
    const provider = config.providers[name];
    if (!provider) throw new ConfigError(`config key ${key}: no provider named "${name}" under providers`);
    if (!providerTypes[provider.type]![operation]) {
      throw new ConfigError(`config key ${key}: provider "${name}" (type ${provider.type}) does not serve ${operation}`);
    }
  };
  config.search.chain.forEach((name, i) => requireProvider(`search.chain[${i}]`, name, 'search'));
  for (const name of Object.keys(config.search.fusion.weights)) {
    if (!config.search.chain.includes(name)) throw new ConfigError(`config key search.fusion.weights.${name}: "${name}" is not in search.chain`);
  }
  if (config.health.maxOpenMs < config.health.openMs) throw new ConfigError('config key health.maxOpenMs must not be below health.openMs');
  // node:http refuses a headers timeout longer than the whole request's.
  if (config.server.bodyTimeoutMs < config.server.headersTimeoutMs) {
    throw new ConfigError('config key server.bodyTimeoutMs must not be below server.headersTimeoutMs');
  }
  if (config.cache.backend === 'redis' && !config.cache.redis) throw new ConfigError('config key cache.redis.url is required when cache.backend is redis');
  config.content.chain.forEach((name, i) => requireProvider(`content.chain[${i}]`, name, 'content'));
  for (const [model, { chain }] of Object.entries(config.rerank.models)) {
    chain.forEach((name, i) => requireProvider(`rerank.models.${model}.chain[${i}]`, name, 'rerank'));
  }

  const { defaultModel, models } = config.rerank;
  if (defaultModel !== undefined && !(defaultModel in models)) {
    throw new ConfigError(`config key rerank.defaultModel: no model named "${defaultModel}" under rerank.models`);
  }

  for (const [name, model] of Object.entries(config.dialects.rerankAliases)) {
    if (model !== DEFAULT_RERANK_MODEL && !(model in config.rerank.models)) {
      throw new ConfigError(`config key dialects.rerankAliases.${name}: no model named "${model}" under rerank.models`);
    }
  }

  const searchRerank = config.search.rerank;
  if (searchRerank.model !== null && searchRerank.model !== DEFAULT_RERANK_MODEL && !(searchRerank.model in config.rerank.models)) {
    throw new ConfigError(`config key search.rerank.model: no model named "${searchRerank.model}" under rerank.models`);
  }

  const envKeys = (env.SEARCHGATE_API_KEYS ?? '')
    .split(',')
    .map((key) => key.trim())
    .filter(Boolean);
  config.auth.keys.push(...envKeys.map((key, i) => ({ name: `env-${i + 1}`, key })));
  config.auth.keys.forEach(({ key }, i) => {
    if (key === 'YOUR_API_KEY') throw new ConfigError(`config key auth.keys[${i}].key is the placeholder YOUR_API_KEY; set a real key`);
    if (/\s/.test(key) || key.length < 8) throw new ConfigError(`config key auth.keys[${i}].key must be at least 8 characters without whitespace`);
  });

  return { ...config, version: answersFingerprint(config) };
}

/**
 * A digest of what shapes an answer: providers, chains, retries, dialects and cache lifetimes. What
 * only one process is about (its port and timeouts, log level, keys, account store, health policy,
 * the cache's own backend and size) stays out, so that replicas differing there still share a
 * Redis response cache, while a change of provider or chain starts a new generation of keys.
 */
function answersFingerprint(config: Omit<ResolvedConfig, 'version'>): string {
  const { providers, retry, search, content, rerank, dialects, cache } = config;
  const answers = { providers, retry, search, content, rerank, dialects, ttlSeconds: cache.ttlSeconds };
  return createHash('sha256').update(JSON.stringify(answers)).digest('hex').slice(0, 16);
}

/** Replaces ${NAME} and ${NAME:-fallback} in every string; a missing variable names the key that needs it. */
function interpolate(node: unknown, env: NodeJS.ProcessEnv, path: string): unknown {
  if (typeof node === 'string') {
    return node.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback?: string) => {
      const value = env[name];
      if (value !== undefined && value !== '') return value;
      if (fallback !== undefined) return fallback;
      throw new ConfigError(`config key ${keyName(path) || '(root)'}: environment variable ${name} is not set`);
    });
  }
  if (Array.isArray(node)) return node.map((item, i) => interpolate(item, env, `${path}/${i}`));
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, interpolate(value, env, `${path}/${key}`)]));
  }
  return node;
}
