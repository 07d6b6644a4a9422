/** voyage's API as searchgate serves it to voyage's clients: not built yet (issue 16). */
import { specErrorReply } from '../../dialects/errors.js';
import type { Dialect } from '../../dialects/types.js';

export const voyageDialect: Dialect = {
  name: 'voyage',
  prefixes: ['/voyage'],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: specErrorReply,
  routes: [],
};
