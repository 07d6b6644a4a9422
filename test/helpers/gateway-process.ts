/**
 * One gateway replica in its own process, for the multi-replica tests: the config comes as JSON in
 * argv, and the clock is the parent's to set, by writing `now <epoch ms>` lines to stdin (answered
 * with `ok`). Prints `listening <port>` once it serves.
 */
import { createInterface } from 'node:readline';
import { resolveConfig } from '../../src/config/load.js';
import { createGateway } from '../../src/server/app.js';
import { createLogger } from '../../src/server/logger.js';

const config = resolveConfig(JSON.parse(process.argv[2]!), {});
let now = Date.now();
const gateway = createGateway({ config, logger: createLogger('warn', (line) => process.stderr.write(line)), now: () => now });
const address = await gateway.listen(0, '127.0.0.1');
process.stdout.write(`listening ${address.port}\n`);

for await (const line of createInterface({ input: process.stdin })) {
  const [command, value] = line.split(' ');
  if (command === 'now') {
    now = Number(value);
    process.stdout.write('ok\n');
  }
}
await gateway.close(100);
