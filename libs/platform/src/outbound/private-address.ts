import { BlockList, isIP } from 'node:net';

// Special-purpose ranges (IANA registries for IPv4 and IPv6): loopback, private, shared (CGNAT),
// link-local (cloud metadata at 169.254.169.254), documentation, benchmarking, multicast,
// reserved; and the IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4, Teredo), refused
// whole rather than decoded.
const IPV4 = ['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4'];
const IPV6 = ['::/127', '::ffff:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '2001::/32', '2001:db8::/32', '2002::/16', 'fc00::/7', 'fe80::/10', 'fec0::/10', 'ff00::/8'];

// One list per family: a BlockList matches IPv4 addresses against IPv6 rules as ::ffff:a.b.c.d,
// so ::ffff:0:0/96 in a shared list would refuse every IPv4 address.
function blockList(cidrs: string[], family: 'ipv4' | 'ipv6') {
  const list = new BlockList();
  for (const cidr of cidrs) list.addSubnet(cidr.split('/')[0], Number(cidr.split('/')[1]), family);
  return list;
}
const BLOCKED_V4 = blockList(IPV4, 'ipv4');
const BLOCKED_V6 = blockList(IPV6, 'ipv6');

/** True for an address an outbound fetch of user-supplied URLs must not reach; anything that is not an IP address counts as one. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return family === 4 ? BLOCKED_V4.check(address, 'ipv4') : BLOCKED_V6.check(address, 'ipv6');
}
