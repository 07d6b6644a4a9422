/**
 * robots.txt per origin (RFC 9309): fetched once per crawl, matched for our product token. A 4xx
 * means no rules (everything allowed); a 5xx or an unreachable server means "assume everything is
 * disallowed for now", as the RFC asks, so an outage never turns into an unrestricted crawl.
 */
import { createRequire } from 'node:module';
import { FetchError, ROBOTS_USER_AGENT } from '../fetch/index.js';
import type { FetchedResource } from '../fetch/index.js';

// robots-parser is CommonJS exporting the function itself, while its typings declare an ES default
// export; under NodeNext the default import would be typed as the module, so require it directly.
const robotsParser = createRequire(import.meta.url)('robots-parser') as typeof import('robots-parser').default;

export interface RobotsRules {
  isAllowed(url: string): boolean;
  /** Crawl-delay for our user agent (or *), in milliseconds; null when none is given. */
  crawlDelayMs: number | null;
  /** Why these rules apply, for the log: "robots.txt", "no robots.txt (HTTP 404)", … */
  source: string;
}

export type RobotsFetcher = (url: string, signal: AbortSignal) => Promise<FetchedResource>;

const ALLOW_ALL = (source: string): RobotsRules => ({ isAllowed: () => true, crawlDelayMs: null, source });
const DISALLOW_ALL = (source: string): RobotsRules => ({ isAllowed: () => false, crawlDelayMs: null, source });

export async function loadRobots(origin: string, fetcher: RobotsFetcher, signal: AbortSignal): Promise<RobotsRules> {
  const robotsUrl = new URL('/robots.txt', origin).href;
  let resource: FetchedResource;
  try {
    resource = await fetcher(robotsUrl, signal);
  } catch (error) {
    if (signal.aborted) throw error;
    const reason = error instanceof FetchError ? error.message : String(error);
    return DISALLOW_ALL(`robots.txt unreachable (${reason}): nothing fetched from ${origin}`);
  }
  if (resource.status >= 500) return DISALLOW_ALL(`robots.txt answered HTTP ${resource.status}: nothing fetched from ${origin}`);
  if (resource.status >= 400) return ALLOW_ALL(`no robots.txt (HTTP ${resource.status})`);
  if (resource.status !== 200) return ALLOW_ALL(`robots.txt answered HTTP ${resource.status}`);
  // robots-parser matches rules against URLs of the origin it was given; a robots.txt that
  // redirected elsewhere still governs the origin that asked for it.
  const robots = robotsParser(robotsUrl, resource.body.toString('utf8'));
  const crawlDelay = robots.getCrawlDelay(ROBOTS_USER_AGENT);
  return {
    // undefined means "not this origin", which cannot happen for URLs we route here by origin.
    isAllowed: (url) => robots.isAllowed(url, ROBOTS_USER_AGENT) !== false,
    crawlDelayMs: typeof crawlDelay === 'number' && crawlDelay > 0 ? crawlDelay * 1000 : null,
    source: 'robots.txt',
  };
}
