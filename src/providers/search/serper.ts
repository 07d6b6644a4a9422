/** Placeholder: the serper adapter is being written. */
import type { ProviderType } from '../types.js';

export const serperProviderType: ProviderType = { optionsSchema: { type: 'object' } };
