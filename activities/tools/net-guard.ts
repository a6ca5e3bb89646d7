/**
 * Which addresses http_request may connect to. The model is untrusted (a fetched page can steer
 * it), and the worker sits next to things a page must not reach: the Temporal server (whose HTTP
 * API lists every session), cloud metadata endpoints, the memory database, the LAN. So private,
 * loopback, link-local and other special-purpose addresses are refused unless the session's
 * config names the host and its port in `network.allowPrivateHosts` (one port, never a whole
 * host), and the worker's own services and listening ports are refused always. The check runs
 * on the address the socket actually connects to (see guardedLookup), so a DNS answer cannot
 * change between the check and the connect.
 */
import { parseHostEntry, urlHostname } from '../../common/allow-hosts';
import { defaultHttpPort, defaultMetricsPort, defaultUiPort } from '../../common/ports';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { OwnPortLookup } from './own-ports';

/** A service of the worker itself (Temporal, its UI, the memory database): never reachable from http_request. */
export interface ServiceAddress {
  host: string;
  port: number;
  /** What it is, for the error message. */
  name: string;
}

/** Resolves a host name to all its addresses (the worker uses the system resolver; tests inject one). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address of every family. */
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** What the guard needs for one request. */
export interface NetPolicy {
  /** `host:port` entries whose private or loopback addresses may be reached on that port (portless entries open nothing). */
  allowPrivateHosts: readonly string[];
  /** The worker's own services, refused whatever is allowed. */
  services: readonly ServiceAddress[];
  /** The ports this machine's worker listens on itself (own-ports.ts), refused on every local address whatever is allowed. */
  ownPorts: OwnPortLookup;
  resolver: Resolver;
}

/** Thrown when the destination is refused; `allowable` says whether allowPrivateHosts could lift it. */
export class AddressDeniedError extends Error {
  constructor(
    /** The refused address, as resolved or written. */
    readonly address: string,
    /** What it is: "a loopback address", "the worker's own Temporal server". */
    readonly reason: string,
    readonly allowable: boolean,
    /** The host name that resolved to it, when it came from DNS. */
    readonly resolvedFrom?: string,
  ) {
    super(resolvedFrom ? `${resolvedFrom} resolves to ${address}, ${reason}` : `${address} is ${reason}`);
    this.name = 'AddressDeniedError';
  }
}

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
function isThisMachine(address: string): boolean {
  const a = normaliseAddress(embeddedIpv4(address) ?? address);
  if (/^(127|0)\./.test(a) || a === normaliseAddress('::1') || a === normaliseAddress('::')) return true;
  return Object.values(networkInterfaces()).some((list) => (list ?? []).some((i) => normaliseAddress(i.address) === a));
}

/**
 * True when `hostname` (as the URL parser gives it) and port match a `host:port` entry of
 * allowPrivateHosts. An entry without a port matches nothing: the config refuses those, and a
 * session started before that rule must not keep every port of a host open.
 */
export function hostAllowed(entries: readonly string[], hostname: string, port: number): boolean {
  return entries.some((entry) => {
    const e = parseHostEntry(entry);
    return e !== undefined && e.port !== undefined && e.host === hostname && e.port === port;
  });
}

/** Which worker service, if any, is at address:port (reached by the URL host `hostname`). */
async function serviceAt(policy: NetPolicy, hostname: string, address: string, port: number): Promise<ServiceAddress | undefined> {
  const target = normaliseAddress(embeddedIpv4(address) ?? address);
  for (const service of policy.services) {
    if (service.port !== port) continue;
    const serviceHost = service.host.replace(/^\[|\]$/g, '');
    if (urlHostname(serviceHost) === hostname) return service;
    const addresses = isIP(serviceHost) ? [serviceHost] : (await policy.resolver(serviceHost).catch(() => [])).map((a) => a.address);
    for (const a of addresses) {
      if (normaliseAddress(embeddedIpv4(a) ?? a) === target) return service;
      // A service on this machine answers on every local address when bound to all of them
      // (0.0.0.0 and the LAN address both reach a 127.0.0.1 listener's neighbours): refuse them all.
      if (isThisMachine(a) && isThisMachine(address)) return service;
    }
  }
  return undefined;
}

/**
 * Throws AddressDeniedError unless the request to `hostname` (URL form) on `port` may connect to
 * `address`.
 */
export async function checkAddress(policy: NetPolicy, hostname: string, address: string, port: number): Promise<void> {
  const service = await serviceAt(policy, hostname, address, port);
  if (service) {
    throw new AddressDeniedError(address, `the worker's own ${service.name} on port ${port}`, false);
  }
  // A listener bound to 0.0.0.0 answers on every local address, so the port is refused on all of them.
  const own = isThisMachine(address) ? await policy.ownPorts(port) : undefined;
  if (own) throw new AddressDeniedError(address, `the worker's own ${own} on port ${port}`, false);
  if (hostAllowed(policy.allowPrivateHosts, hostname, port)) return;
  const why = classifyAddress(address);
  if (why) throw new AddressDeniedError(address, why, true);
}

/**
 * A `lookup` for net/http that resolves with the policy's resolver, drops every address the
 * policy refuses and hands only the rest to the socket; when none is left it fails with
 * AddressDeniedError. The socket connects to what this returns, so no later DNS answer counts.
 */
export function guardedLookup(policy: NetPolicy, hostname: string, port: number): LookupFunction {
  return (host: string, options: LookupOptions, callback) => {
    void (async () => {
      const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
      const answers = (await policy.resolver(host)).filter((a) => !family || a.family === family);
      const allowed: LookupAddress[] = [];
      let firstDenial: AddressDeniedError | undefined;
      for (const answer of answers) {
        try {
          await checkAddress(policy, hostname, answer.address, port);
          allowed.push(answer);
        } catch (err) {
          if (!(err instanceof AddressDeniedError)) throw err;
          firstDenial ??= err;
        }
      }
      if (allowed.length === 0) {
        if (firstDenial) throw new AddressDeniedError(firstDenial.address, firstDenial.reason, firstDenial.allowable, host);
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host });
      }
      return allowed;
    })().then(
      (allowed) => (options.all ? callback(null, allowed) : callback(null, allowed[0].address, allowed[0].family)),
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/**
 * The worker's own services from its environment: TEMPORAL_ADDRESS, the embedded dev server,
 * its Web UI, HTTP API and metrics (HARNESS_EMBEDDED_PORT, HARNESS_UI_PORT, HARNESS_HTTP_PORT,
 * HARNESS_METRICS_PORT, defaults as in client/temporal.ts), the host:port of DATABASE_URL and the
 * OTLP receiver turns are exported to (it holds every exported trace). Listed by address, so
 * remote ones count too; local ports are also found by own-ports.ts.
 */
export function workerServices(env: Record<string, string | undefined>): ServiceAddress[] {
  const embeddedPort = Number(env.HARNESS_EMBEDDED_PORT || 7233);
  const uiPort = Number(env.HARNESS_UI_PORT || defaultUiPort(embeddedPort));
  const httpPort = Number(env.HARNESS_HTTP_PORT || defaultHttpPort(uiPort));
  const metricsPort = Number(env.HARNESS_METRICS_PORT || defaultMetricsPort(uiPort, httpPort));
  const services: ServiceAddress[] = [
    { host: '127.0.0.1', port: embeddedPort, name: 'Temporal server' },
    { host: '127.0.0.1', port: uiPort, name: 'Temporal Web UI' },
    { host: '127.0.0.1', port: httpPort, name: 'Temporal HTTP API' },
    { host: '127.0.0.1', port: metricsPort, name: 'Temporal metrics' },
  ];
  const temporal = env.TEMPORAL_ADDRESS ? parseHostEntry(env.TEMPORAL_ADDRESS) : undefined;
  if (temporal) services.push({ host: temporal.host, port: temporal.port ?? 7233, name: 'Temporal server' });
  const db = env.DATABASE_URL ? databaseHost(env.DATABASE_URL) : undefined;
  if (db) services.push({ host: db.host, port: db.port ?? 5432, name: 'memory database' });
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
    const receiver = env[name]?.trim() ? httpHost(env[name]!.trim()) : undefined;
    if (receiver) services.push({ ...receiver, name: 'trace receiver (OTLP)' });
  }
  return services;
}

/** host and port (scheme default when absent) of an http(s) URL, or undefined when it is not one. */
function httpHost(text: string): { host: string; port: number } | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return { host: url.hostname, port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80 };
  } catch {
    return undefined;
  }
}

/** host and port of a postgres:// URL (postgres: is not a special scheme, so its host is normalised here). */
function databaseHost(databaseUrl: string): { host: string; port?: number } | undefined {
  try {
    const url = new URL(databaseUrl);
    // No host means a Unix socket (or libpq's default), which http_request cannot reach.
    if (!url.hostname) return undefined;
    return parseHostEntry(url.port ? `${url.hostname}:${url.port}` : url.hostname);
  } catch {
    return undefined; // a libpq keyword string: the memory host reports it
  }
}
