#!/usr/bin/env node
/**
 * `searchgate serve`: starts the gateway with the deployment's config; SIGTERM drains, then exits.
 * The gateway's modules are loaded when `serve` runs, and each other command's when it runs: loading
 * the gateway took about 1.5 s of a 2 s start on a 2-vCPU VM, which every `extract`, `index` or
 * `keys` call paid for nothing.
 */
import type { ResolvedConfig } from '../config/load.js';
import type { LocalOptions } from '../providers/local/search.js';
import type { Logger } from '../server/logger.js';

const USAGE = `usage: searchgate <command>

commands:
  serve                 start the gateway (config: SEARCHGATE_CONFIG, default config/default.yaml; port: PORT, default 8080)
  index <subcommand>    manage the local index: add, fold, stats, remove, export (searchgate index --help)
  extract <file|dir|url>… print the title, date and main text of pages, as the service extracts them
                        (several pages or a directory: one JSON line each; searchgate extract --help)
  accounts <subcommand> manage accounts: create, list, disable, enable, set-allowance, set-password
  keys <subcommand>     manage API keys: create, list, delete
  calibrate             fit a reranker model's score calibration on labelled data (searchgate calibrate --help)
  help                  show this text`;

/** Says what the local index holds, and how to fill it when it is empty. */
async function describeLocalIndexes(config: ResolvedConfig, logger: Logger): Promise<void> {
  const { providerIndex } = await import('../providers/local/search.js');
  for (const name of config.search.chain) {
    const provider = config.providers[name]!;
    if (provider.type !== 'local') continue;
    const directory = String(provider.directory);
    try {
      const stats = await (await providerIndex(provider as unknown as LocalOptions, logger)).stats();
      logger.info('local index', { provider: name, directory, documents: stats.documents, domains: stats.domains });
      if (stats.documents === 0) {
        logger.warn(
          `the local index is empty, so web-search answers with zero results; add pages with: searchgate index add <url | sitemap.xml | pages.jsonl | crawl.warc.gz> --dir ${directory}`,
        );
      }
    } catch (error) {
      logger.error('local index cannot be opened', { provider: name, directory, error: (error as Error).message });
    }
  }
}

async function serve(): Promise<void> {
  const [{ ConfigError, loadConfig }, { ModelDirectoryError }, { closeSharedLocalParts }, { createGateway }, { createLogger }] = await Promise.all([
    import('../config/load.js'),
    import('../local/rerank/model.js'),
    import('../local/shared.js'),
    import('../server/app.js'),
    import('../server/logger.js'),
  ]);
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
  let address;
  try {
    address = await gateway.listen(port, host);
  } catch (error) {
    // A model the config names but cannot load is a configuration problem: say which file, exit 78.
    if (error instanceof ModelDirectoryError) {
      process.stderr.write(`searchgate: cannot start: ${error.message}\n`);
      await closeSharedLocalParts();
      process.exit(78);
    }
    throw error;
  }
  // Before anything is awaited past the listen: a supervisor may stop the process as soon as it answers.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    void gateway
      .close()
      .then(() => closeSharedLocalParts())
      .then(() => {
        logger.info('stopped');
        process.exit(0);
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
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
  await describeLocalIndexes(config, logger);
}

/** Subcommands that live in their own module, loaded only when used. */
const SUBCOMMANDS: Record<string, () => Promise<{ main(argv: string[]): Promise<number> }>> = {
  index: () => import('./index-command.js'),
  extract: () => import('./extract-command.js'),
  calibrate: () => import('./calibrate.js'),
  accounts: async () => ({ main: (await import('./accounts-command.js')).accountsMain }),
  keys: async () => ({ main: (await import('./accounts-command.js')).keysMain }),
};

const [command = 'help', ...rest] = process.argv.slice(2);
switch (command) {
  case 'serve':
    await serve();
    break;
  case 'index':
  case 'extract':
  case 'calibrate':
  case 'accounts':
  case 'keys':
    process.exitCode = await (await SUBCOMMANDS[command]!()).main(rest);
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
