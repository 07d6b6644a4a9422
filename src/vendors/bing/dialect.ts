/** bing's API as searchgate serves it to bing's clients: not built yet (issue 16). */
import { specErrorReply } from '../../dialects/errors.js';
import type { Dialect } from '../../dialects/types.js';

export const bingDialect: Dialect = {
  name: 'bing',
  prefixes: ['/bing'],
  keys: [{ in: 'bearer' }],
  keyHint: 'send "Authorization: Bearer <API_KEY>"',
  renderError: specErrorReply,
  routes: [],
};
