/**
 * Every vendor, in both directions. Provider types by the `type` key of a provider's config: each
 * names the schema of its options (checked at startup) and builds the operations it serves. Dialects:
 * the vendors' APIs as searchgate serves them to their clients. README.md has both tables. The
 * embedded default's types (`local`, `local-reranker`) live with the provider toolkit; every other
 * vendor is one folder here.
 */
import { createLocalContent } from '../providers/local/content.js';
import { createLocalRerank, localRerankerOptionsSchema } from '../providers/local/rerank.js';
import { createLocalSearch, localOptionsSchema } from '../providers/local/search.js';
import type { ProviderType } from '../providers/types.js';
import type { Dialect } from '../dialects/types.js';
import { bingDialect } from './bing/dialect.js';
import { braveDialect } from './brave/dialect.js';
import { cohereDialect } from './cohere/dialect.js';
import { exaDialect } from './exa/dialect.js';
import { googleDialect } from './google/dialect.js';
import { jinaDialect } from './jina/dialect.js';
import { searxngDialect } from './searxng/dialect.js';
import { serperDialect } from './serper/dialect.js';
import { tavilyDialect } from './tavily/dialect.js';
import { voyageDialect } from './voyage/dialect.js';
import { braveProviderType } from './brave/search.js';
import { cohereCompatibleProviderType } from './cohere/compatible.js';
import { cohereProviderType } from './cohere/rerank.js';
import { exaProviderType } from './exa/index.js';
import { firecrawlProviderType } from './firecrawl/content.js';
import { googleProviderType } from './google/search.js';
import { jinaProviderType } from './jina/index.js';
import { marginaliaProviderType } from './marginalia/search.js';
import { createSearchgateCompatibleRerank } from './searchgate-compatible/rerank.js';
import { createSearchgateCompatibleSearch, searchgateCompatibleOptionsSchema } from './searchgate-compatible/search.js';
import { searxngProviderType } from './searxng/search.js';
import { serperProviderType } from './serper/search.js';
import { tavilyProviderType } from './tavily/index.js';
import { teiProviderType } from './tei/rerank.js';
import { voyageProviderType } from './voyage/rerank.js';
import { wikipediaProviderType } from './wikipedia/search.js';

export type { ProviderType } from '../providers/types.js';

export const builtInProviderTypes: Record<string, ProviderType> = {
  local: {
    optionsSchema: localOptionsSchema,
    search: createLocalSearch,
    content: createLocalContent,
  },
  'local-reranker': {
    optionsSchema: localRerankerOptionsSchema,
    rerank: createLocalRerank,
  },
  'searchgate-compatible': {
    optionsSchema: searchgateCompatibleOptionsSchema,
    search: createSearchgateCompatibleSearch,
    rerank: createSearchgateCompatibleRerank,
  },
  searxng: searxngProviderType,
  brave: braveProviderType,
  exa: exaProviderType,
  tavily: tavilyProviderType,
  serper: serperProviderType,
  google: googleProviderType,
  jina: jinaProviderType,
  marginalia: marginaliaProviderType,
  wikipedia: wikipediaProviderType,
  firecrawl: firecrawlProviderType,
  cohere: cohereProviderType,
  voyage: voyageProviderType,
  tei: teiProviderType,
  'cohere-compatible': cohereCompatibleProviderType,
};

/** The vendors' APIs searchgate answers, besides its own (src/dialects/langsearch.ts). */
export const builtInDialects: readonly Dialect[] = [
  cohereDialect,
  jinaDialect,
  voyageDialect,
  tavilyDialect,
  exaDialect,
  braveDialect,
  searxngDialect,
  bingDialect,
  serperDialect,
  googleDialect,
];
