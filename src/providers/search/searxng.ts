/** Placeholder: the searxng adapter is being written. */
import type { ProviderType } from '../types.js';

export const searxngProviderType: ProviderType = { optionsSchema: { type: 'object' } };
