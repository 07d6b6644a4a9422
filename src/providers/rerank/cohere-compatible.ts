/** Placeholder: the cohere-compatible adapter is being written. */
import type { ProviderType } from '../types.js';

export const cohereCompatibleProviderType: ProviderType = { optionsSchema: { type: 'object' } };
