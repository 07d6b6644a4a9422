/** Tavily: what searchgate offers for it, as an upstream (search and extract). */
import type { ProviderType } from '../../providers/types.js';
import { tavilyOptionsSchema } from './client.js';
import { createTavilyContent } from './extract.js';
import { createTavilySearch } from './search.js';

export const tavilyProviderType: ProviderType = {
  optionsSchema: tavilyOptionsSchema,
  search: createTavilySearch,
  content: createTavilyContent,
};
