/**
 * What kind of address an IP address is, for the http_request guard (net-guard.ts): the IANA
 * special-purpose blocks it falls in, the IPv4 address an IPv6 form embeds (judged first, so
 * ::ffff:127.0.0.1 is loopback), a form to compare addresses by, and whether it reaches this
 * machine. Pure functions of the address, apart from this machine's interface list.
 */
import { BlockList, isIP } from 'node:net';
import { networkInterfaces } from 'node:os';

type Range = readonly [label: string, prefix: string, bits: number];

// The IANA special-purpose registries, minus the few blocks that are globally reachable (AS112,
// AMT): nothing in these is a public web server, and several are the worker's neighbours.
const IPV4_DENIED: readonly Range[] = [
  ['a broadcast', '255.255.255.255', 32],
  ['a "this network" (0.0.0.0/8)', '0.0.0.0', 8],
  ['a private (10.0.0.0/8)', '10.0.0.0', 8],
  ['a carrier-grade NAT (100.64.0.0/10)', '100.64.0.0', 10],
  ['a loopback', '127.0.0.0', 8],
  ['a link-local (169.254.0.0/16, where cloud metadata lives)', '169.254.0.0', 16],
  ['a private (172.16.0.0/12)', '172.16.0.0', 12],
  ['an IETF protocol assignment (192.0.0.0/24)', '192.0.0.0', 24],
  ['a documentation (192.0.2.0/24)', '192.0.2.0', 24],
  ['a deprecated 6to4 relay (192.88.99.0/24)', '192.88.99.0', 24],
  ['a private (192.168.0.0/16)', '192.168.0.0', 16],
  ['a benchmarking (198.18.0.0/15)', '198.18.0.0', 15],
  ['a documentation (198.51.100.0/24)', '198.51.100.0', 24],
  ['a documentation (203.0.113.0/24)', '203.0.113.0', 24],
  ['a multicast', '224.0.0.0', 4],
  ['a reserved (240.0.0.0/4)', '240.0.0.0', 4],
];

const IPV6_DENIED: readonly Range[] = [
  ['an unspecified (::)', '::', 128],
  ['a loopback', '::1', 128],
  // Deprecated IPv4-compatible addresses (and the IPv4-mapped/translated blocks, whose embedded
  // IPv4 is checked first): never a destination of their own.
  ['an IPv4-compatible (::/96)', '::', 96],
  ['an IPv4-mapped (::ffff:0:0/96)', '::ffff:0:0', 96],
  ['an IPv4-translated (::ffff:0:0:0/96)', '::ffff:0:0:0', 96],
  ['a local-use NAT64 (64:ff9b:1::/48)', '64:ff9b:1::', 48],
  ['a discard-only (100::/64)', '100::', 64],
  ['an IETF protocol assignment (2001::/23, includes Teredo)', '2001::', 23],
  ['a documentation (2001:db8::/32)', '2001:db8::', 32],
  ['a documentation (3fff::/20)', '3fff::', 20],
  ['an SRv6 segment (5f00::/16)', '5f00::', 16],
  ['a unique-local (fc00::/7)', 'fc00::', 7],
  ['a link-local (fe80::/10)', 'fe80::', 10],
  ['a site-local (fec0::/10)', 'fec0::', 10],
  ['a multicast', 'ff00::', 8],
];

function blockLists(ranges: readonly Range[], family: 'ipv4' | 'ipv6'): Array<[string, BlockList]> {
  return ranges.map(([label, prefix, bits]) => {
    const list = new BlockList();
    list.addSubnet(prefix, bits, family);
    return [label, list];
  });
}

const V4_LISTS = blockLists(IPV4_DENIED, 'ipv4');
const V6_LISTS = blockLists(IPV6_DENIED, 'ipv6');

/** Eight 16-bit groups of an IPv6 address (zone id ignored), or undefined if it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  const text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(text) !== 6) return undefined;
  let body = text;
  const tail: number[] = [];
  // A trailing dotted quad (::ffff:127.0.0.1) is two groups.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(body);
  if (dotted) {
    const [a, b, c, d] = dotted[2].split('.').map(Number);
    tail.push((a << 8) | b, (c << 8) | d);
    body = dotted[1].endsWith('::') ? dotted[1] : dotted[1].slice(0, -1);
  }
  const [head, rest] = body.includes('::') ? body.split('::') : [body, undefined];
  const parse = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = [...parse(rest ?? ''), ...tail];
  const fill = rest === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...fill, ...right];
}

function ipv4FromGroups(hi: number, lo: number): string {
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff].join('.');
}

/**
 * The IPv4 address an IPv6 address stands for, when it embeds one the network would reach:
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d), IPv4-compatible (::a.b.c.d),
 * NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::).
 */
export function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (!g) return undefined;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return ipv4FromGroups(g[6], g[7]);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return ipv4FromGroups(g[6], g[7]);
  // :: and ::1 are themselves, not 0.0.0.0 and 0.0.0.1.
  if (zeros(0, 6) && !(g[6] === 0 && g[7] <= 1)) return ipv4FromGroups(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return ipv4FromGroups(g[6], g[7]);
  if (g[0] === 0x2002) return ipv4FromGroups(g[1], g[2]);
  return undefined;
}

/** The address in a comparable form: an IPv4 dotted quad, or eight lower-case IPv6 groups without zone id. */
export function normaliseAddress(address: string): string {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIP(bare) === 4) return bare;
  const g = ipv6Groups(bare);
  return g ? g.map((x) => x.toString(16)).join(':') : bare.toLowerCase();
}

/**
 * Why an address is not public ("a loopback address", "a private (10.0.0.0/8) address", …), or
 * undefined for a public address. IPv6 forms that embed an IPv4 address are judged by that address first.
 */
export function classifyAddress(address: string): string | undefined {
  const bare = normaliseAddress(address);
  const family = isIP(bare);
  const v4Label = (a: string) => V4_LISTS.find(([, list]) => list.check(a, 'ipv4'))?.[0];
  if (family === 4) {
    const label = v4Label(bare);
    return label && `${label} address`;
  }
  if (family !== 6) return 'not an IP address';
  const v4 = embeddedIpv4(bare);
  const inner = v4 && v4Label(v4);
  if (inner) return `${inner} address (as ${v4})`;
  const label = V6_LISTS.find(([, list]) => list.check(bare, 'ipv6'))?.[0];
  return label && `${label} address`;
}

/** True for addresses that reach this machine: loopback, unspecified, and the interfaces' own addresses. */
export function isThisMachine(address: string): boolean {
  const a = normaliseAddress(embeddedIpv4(address) ?? address);
  if (/^(127|0)\./.test(a) || a === normaliseAddress('::1') || a === normaliseAddress('::')) return true;
  return Object.values(networkInterfaces()).some((list) => (list ?? []).some((i) => normaliseAddress(i.address) === a));
}
