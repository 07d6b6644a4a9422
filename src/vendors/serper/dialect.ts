/** serper's API as searchgate serves it to serper's clients: not built yet (issue 16). */
import { specErrorReply } from '../../dialects/errors.js';
import type { Dialect } from '../../dialects/types.js';

export const serperDialect: Dialect = {
  name: 'serper',
  prefixes: ['/serper'],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: specErrorReply,
  routes: [],
};
