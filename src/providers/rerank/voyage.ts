/** Placeholder: the voyage adapter is being written. */
import type { ProviderType } from '../types.js';

export const voyageProviderType: ProviderType = { optionsSchema: { type: 'object' } };
