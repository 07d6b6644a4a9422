/**
 * One notion of "domain" for the whole product: the request's domain filters, the gateway's own
 * filtering, the index's labels and the crawler's scope all compare hosts this way.
 */

/** Lower case, no trailing dot, no leading "www.". */
export function hostWithoutWww(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '').replace(/^www\./, '');
}

/** A domain covers itself and its subdomains: "example.com" covers "docs.example.com", not "badexample.com". */
export function isWithinSite(hostname: string, site: string): boolean {
  const host = hostWithoutWww(hostname);
  const root = hostWithoutWww(site);
  return host === root || host.endsWith(`.${root}`);
}
