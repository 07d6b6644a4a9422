/** Placeholder: the jina adapter is being written. */
import type { ProviderType } from '../types.js';

export const jinaProviderType: ProviderType = { optionsSchema: { type: 'object' } };
