/** Jina AI: what searchgate offers for it, as an upstream (search, the Reader and rerank). */
import type { ProviderType } from '../../providers/types.js';
import { jinaOptionsSchema } from './client.js';
import { createJinaContent } from './reader.js';
import { createJinaRerank } from './rerank.js';
import { createJinaSearch } from './search.js';

export const jinaProviderType: ProviderType = {
  optionsSchema: jinaOptionsSchema,
  search: createJinaSearch,
  content: createJinaContent,
  rerank: createJinaRerank,
};
