/**
 * A gateway in its own process, for the memory benchmarks (bench/memory-common.ts starts it): so
 * that its RSS is its own and not the load client's. argv: the dist/ directory of the build to run
 * (this one, or an earlier build's for a before/after in one run), then the raw config as JSON.
 * Prints `listening <port>` once it serves; stops when stdin closes.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dist, rawConfig] = process.argv.slice(2) as [string, string];
const load = (module: string) => import(pathToFileURL(resolve(dist, module)).href);
const { resolveConfig } = await load('src/config/load.js');
const { createGateway } = await load('src/server/app.js');
const { createLogger } = await load('src/server/logger.js');

const config = resolveConfig(JSON.parse(rawConfig), process.env);
// Warnings and errors go to stderr, where the benchmark counts the unhandled ones.
const gateway = createGateway({ config, logger: createLogger(config.logging.level, (line: string) => process.stderr.write(line)) });
const address = await gateway.listen(0, '127.0.0.1');
process.stdout.write(`listening ${address.port}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await gateway.close(1000);
  process.exit(0);
});
