/**
 * Provider types by the `type` key of a provider's config. Each type names the schema of its options
 * (checked at startup) and builds the operations it serves.
 */
import { createLocalContent } from './content/local.js';
import { createLocalSearch, localOptionsSchema } from './search/local.js';
import { createLocalRerank, localRerankerOptionsSchema } from './rerank/local.js';
import { createSearchgateCompatibleRerank } from './rerank/searchgate-compatible.js';
import { createSearchgateCompatibleSearch, searchgateCompatibleOptionsSchema } from './search/searchgate-compatible.js';
import type { ContentProvider, RerankProvider, SearchProvider } from './types.js';

export interface ProviderType {
  optionsSchema: object;
  search?: (name: string, options: any) => SearchProvider;
  content?: (name: string, options: any) => ContentProvider;
  rerank?: (name: string, options: any) => RerankProvider;
}

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
};
