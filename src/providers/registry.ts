/**
 * Provider types by the `type` key of a provider's config. Each type names the schema of its options
 * (checked at startup) and builds the operations it serves; README.md has the table.
 */
import { createLocalContent } from './content/local.js';
import { firecrawlProviderType } from './content/firecrawl.js';
import { cohereProviderType } from './rerank/cohere.js';
import { cohereCompatibleProviderType } from './rerank/cohere-compatible.js';
import { createLocalRerank, localRerankerOptionsSchema } from './rerank/local.js';
import { createSearchgateCompatibleRerank } from './rerank/searchgate-compatible.js';
import { teiProviderType } from './rerank/tei.js';
import { voyageProviderType } from './rerank/voyage.js';
import { braveProviderType } from './search/brave.js';
import { exaProviderType } from './search/exa.js';
import { googleProviderType } from './search/google.js';
import { jinaProviderType } from './search/jina.js';
import { createLocalSearch, localOptionsSchema } from './search/local.js';
import { marginaliaProviderType } from './search/marginalia.js';
import { searxngProviderType } from './search/searxng.js';
import { createSearchgateCompatibleSearch, searchgateCompatibleOptionsSchema } from './search/searchgate-compatible.js';
import { serperProviderType } from './search/serper.js';
import { tavilyProviderType } from './search/tavily.js';
import { wikipediaProviderType } from './search/wikipedia.js';
import type { ProviderType } from './types.js';

export type { ProviderType } from './types.js';

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
