/** exa's API as searchgate serves it to exa's clients: not built yet (issue 16). */
import { specErrorReply } from '../../dialects/errors.js';
import type { Dialect } from '../../dialects/types.js';

export const exaDialect: Dialect = {
  name: 'exa',
  prefixes: ['/exa'],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: specErrorReply,
  routes: [],
};
