/** Placeholder: the cohere adapter is being written. */
import type { ProviderType } from '../types.js';

export const cohereProviderType: ProviderType = { optionsSchema: { type: 'object' } };
