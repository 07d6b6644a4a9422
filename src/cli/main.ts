#!/usr/bin/env node
/** `searchgate serve`: starts the gateway with the deployment's config; SIGTERM drains, then exits. */
import { ConfigError, loadConfig } from '../config/load.js';
import { createGateway } from '../server/app.js';
import { createLogger } from '../server/logger.js';

const USAGE = `usage: searchgate <command>

commands:
  serve     start the gateway (config: SEARCHGATE_CONFIG, default config/default.yaml; port: PORT, default 8080)
  help      show this text`;

async function serve(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`searchgate: invalid configuration: ${error.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const logger = createLogger(config.logging.level);
  const gateway = createGateway({ config, logger });
  const port = process.env.PORT !== undefined ? Number(process.env.PORT) : config.server.port;
  const host = process.env.HOST ?? config.server.host;
  const address = await gateway.listen(port, host);
  logger.info('listening', {
    address: `http://${address.address}:${address.port}`,
    search: config.search.chain,
    rerank: Object.keys(config.rerank.models),
    keys: config.auth.keys.length,
  });
  if (config.auth.keys.length === 0) {
    logger.warn('no API keys configured: every request will be refused with 401; set SEARCHGATE_API_KEYS or auth.keys');
  }
  if (config.search.chain.length === 0) logger.warn('no search provider configured: web-search answers 503');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    void gateway.close().then(() => {
      logger.info('stopped');
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

const [command = 'help'] = process.argv.slice(2);
switch (command) {
  case 'serve':
    await serve();
    break;
  case 'help':
  case '--help':
  case '-h':
    process.stdout.write(`${USAGE}\n`);
    break;
  default:
    process.stderr.write(`searchgate: unknown command "${command}"\n${USAGE}\n`);
    process.exit(2);
}
