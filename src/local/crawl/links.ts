/**
 * What a crawled HTML page says about crawling it: its outgoing links and its robots directives.
 *
 * Links marked rel="nofollow" (and its refinements "ugc" and "sponsored") are not followed. Search
 * engines now treat nofollow as a ranking hint, but for a small self-hosted index the site owner's
 * "do not follow" is the better default: such links are mostly comments, ads and login traps, and
 * following them spends the page budget on exactly what the site asked us to leave alone.
 */
import { parseHTML } from 'linkedom';
import { ROBOTS_USER_AGENT, normalizeHttpUrl } from '../fetch/index.js';

export interface PageDirectives {
  /** Absolute, normalized http(s) URLs, in document order, without repeats. */
  links: string[];
  /** <meta name=robots content=noindex> or X-Robots-Tag: noindex: do not store the page. */
  noindex: boolean;
  /** …nofollow: do not follow any of its links. */
  nofollow: boolean;
}

const NOFOLLOW_RELS = new Set(['nofollow', 'ugc', 'sponsored']);

export function readPageDirectives(html: string, pageUrl: string, robotsHeader: string | undefined): PageDirectives {
  const { document } = parseHTML(html);
  const directives = new Set([...robotsDirectives(robotsHeader ?? '')]);
  for (const meta of document.querySelectorAll('meta[name]')) {
    const name = meta.getAttribute('name')?.trim().toLowerCase();
    if (name === 'robots' || name === ROBOTS_USER_AGENT) {
      for (const directive of robotsDirectives(meta.getAttribute('content') ?? '')) directives.add(directive);
    }
  }
  const noindex = directives.has('noindex') || directives.has('none');
  const nofollow = directives.has('nofollow') || directives.has('none');

  const baseHref = document.querySelector('base[href]')?.getAttribute('href');
  const base = (baseHref && normalizeHttpUrl(baseHref, pageUrl)) || pageUrl;
  const links = new Set<string>();
  if (!nofollow) {
    for (const anchor of document.querySelectorAll('a[href], area[href]')) {
      const rels = (anchor.getAttribute('rel') ?? '').toLowerCase().split(/\s+/);
      if (rels.some((rel: string) => NOFOLLOW_RELS.has(rel))) continue;
      const url = normalizeHttpUrl(anchor.getAttribute('href') ?? '', base);
      if (url) links.add(url);
    }
  }
  return { links: [...links], noindex, nofollow };
}

/**
 * Directives from a meta robots content or an X-Robots-Tag value. A header part scoped to another
 * crawler ("googlebot: noindex") is not ours.
 */
function robotsDirectives(value: string): string[] {
  const directives: string[] = [];
  let appliesToUs = true;
  for (const part of value.toLowerCase().split(',')) {
    const scoped = /^\s*([a-z0-9_-]+)\s*:\s*(.*)$/.exec(part);
    // "unavailable_after: <date>" has the same shape but is a directive, not a user agent.
    if (scoped && scoped[1] !== 'unavailable_after') {
      appliesToUs = scoped[1] === ROBOTS_USER_AGENT;
      if (appliesToUs) directives.push(scoped[2]!.trim());
    } else if (appliesToUs) {
      directives.push(part.trim());
    }
  }
  return directives;
}
