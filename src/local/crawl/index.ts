export { CRAWL_DEFAULTS, crawl } from './crawler.js';
export type { CrawlOptions, CrawlSeed, CrawlSummary, PageSink } from './crawler.js';
export { SILENT_PROGRESS, createProgress } from './progress.js';
export type { CrawlCounters, CrawlProgress, PageOutcome } from './progress.js';
export { parseSitemap, readSitemap } from './sitemap.js';
export { readPageDirectives } from './links.js';
export { loadRobots } from './robots.js';
export type { RobotsRules } from './robots.js';
