/** searxng's API as searchgate serves it to searxng's clients: not built yet (issue 16). */
import { specErrorReply } from '../../dialects/errors.js';
import type { Dialect } from '../../dialects/types.js';

export const searxngDialect: Dialect = {
  name: 'searxng',
  prefixes: ['/searxng'],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: specErrorReply,
  routes: [],
};
