/**
 * A child process for the crash test: opens the embedded store, creates an account and a key, then
 * charges one unit at a time and reports each charge on stdout only after it has committed, and
 * charges the next only once that report is in the pipe. The parent kills it with SIGKILL mid-stream.
 */
import { EmbeddedStore } from '../../src/state/embedded.js';
import { newApiKey } from '../../src/state/accounts.js';
import { report } from './report.js';

const [path, synchronous = 'full'] = process.argv.slice(2);
const store = new EmbeddedStore({ path: path!, synchronous: synchronous as 'full' | 'normal' });
await store.migrate();
const account = await store.createAccount({ name: 'crash' }, Date.now());
const { id, digest } = newApiKey();
await store.insertKey({ id, accountId: account.id, name: 'k', digest }, Date.now());
await report(`key ${id} ${account.id}`);
for (let i = 1; ; i++) {
  await store.chargeDaily(account.id, '2030-01-01', 1, 1_000_000_000);
  await report(`charged ${i}`);
}
