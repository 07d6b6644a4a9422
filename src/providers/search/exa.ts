/** Placeholder: the exa adapter is being written. */
import type { ProviderType } from '../types.js';

export const exaProviderType: ProviderType = { optionsSchema: { type: 'object' } };
