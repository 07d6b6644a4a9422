/** Placeholder: the tei adapter is being written. */
import type { ProviderType } from '../types.js';

export const teiProviderType: ProviderType = { optionsSchema: { type: 'object' } };
