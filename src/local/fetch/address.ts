/**
 * Which network addresses a fetch may reach. A crawler follows links that strangers wrote, so
 * without this a page could point it at the operator's own network: an admin panel on 10.0.0.5, a
 * database on 127.0.0.1, or the cloud metadata service at 169.254.169.254 that hands out credentials.
 */
import { BlockList, isIP } from 'node:net';

/** Everything that is not a publicly routed unicast address. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", including the unspecified 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT; Alibaba Cloud's metadata service lives here
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including the metadata address 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, including the broadcast address
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // the deprecated IPv4-compatible form (::a.b.c.d)
  ['fc00::', 7], // unique local; AWS's IPv6 metadata address fd00:ec2::254 is in here
  ['fe80::', 10], // link-local
  ['fec0::', 10], // the deprecated site-local
  ['ff00::', 8], // multicast
  ['2001:db8::', 32], // documentation
  // Tunnelling prefixes that carry an IPv4 address a server could be reached through; real web
  // servers are not published under them.
  ['2002::', 16], // 6to4
  ['2001::', 32], // Teredo
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}
// BlockList also matches IPv4-mapped IPv6 addresses (::ffff:127.0.0.1) against the IPv4 rules.

/** NAT64 (RFC 6052): DNS64 networks give every IPv4-only site an address here, so it is judged by its embedded IPv4. */
const NAT64 = new BlockList();
NAT64.addSubnet('64:ff9b::', 96, 'ipv6');

/** Names that reach a cloud's metadata service without going through an address we would refuse. */
const METADATA_HOSTNAMES = new Set([
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
]);

/** Whether an IP address (v4 or v6, without brackets) is one the fetcher must not connect to. */
export function isNonPublicAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (version === 6) {
    if (NAT64.check(address, 'ipv6')) return isNonPublicAddress(embeddedIpv4(address));
    return NON_PUBLIC.check(address, 'ipv6');
  }
  // Not an address at all: refusing is the only safe answer.
  return true;
}

export function isMetadataHostname(hostname: string): boolean {
  return METADATA_HOSTNAMES.has(hostname.toLowerCase().replace(/\.$/, ''));
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedIpv4(address: string): string {
  // The URL parser gives the canonical compressed form, so the last two groups are the low 32 bits
  // (an empty group stands for zeros compressed away by "::").
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const groups = canonical.split(':');
  const high = parseInt(groups[groups.length - 2] || '0', 16);
  const low = parseInt(groups[groups.length - 1] || '0', 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}
