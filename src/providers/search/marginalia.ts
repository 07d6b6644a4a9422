/** Placeholder: the marginalia adapter is being written. */
import type { ProviderType } from '../types.js';

export const marginaliaProviderType: ProviderType = { optionsSchema: { type: 'object' } };
