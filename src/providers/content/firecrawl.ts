/** Placeholder: the firecrawl adapter is being written. */
import type { ProviderType } from '../types.js';

export const firecrawlProviderType: ProviderType = { optionsSchema: { type: 'object' } };
