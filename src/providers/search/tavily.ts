/** Placeholder: the tavily adapter is being written. */
import type { ProviderType } from '../types.js';

export const tavilyProviderType: ProviderType = { optionsSchema: { type: 'object' } };
