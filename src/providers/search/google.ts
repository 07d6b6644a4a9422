/** Placeholder: the google adapter is being written. */
import type { ProviderType } from '../types.js';

export const googleProviderType: ProviderType = { optionsSchema: { type: 'object' } };
