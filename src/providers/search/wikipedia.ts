/** Placeholder: the wikipedia adapter is being written. */
import type { ProviderType } from '../types.js';

export const wikipediaProviderType: ProviderType = { optionsSchema: { type: 'object' } };
