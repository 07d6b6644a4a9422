/** Placeholder: the brave adapter is being written. */
import type { ProviderType } from '../types.js';

export const braveProviderType: ProviderType = { optionsSchema: { type: 'object' } };
