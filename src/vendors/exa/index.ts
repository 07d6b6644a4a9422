/** Exa: what searchgate offers for it, as an upstream (search and contents). */
import type { ProviderType } from '../../providers/types.js';
import { exaOptionsSchema } from './client.js';
import { createExaContent } from './contents.js';
import { createExaSearch } from './search.js';

export const exaProviderType: ProviderType = {
  optionsSchema: exaOptionsSchema,
  search: createExaSearch,
  content: createExaContent,
};
