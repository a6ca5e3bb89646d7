/**
 * Which addresses http_request may connect to. The model is untrusted (a fetched page can steer
 * it), and the worker sits next to things a page must not reach: the Temporal server (whose HTTP
 * API lists every session), cloud metadata endpoints, the memory database, the LAN. So private,
 * loopback, link-local and other special-purpose addresses are refused unless the session's
 * config names the host and its port in `network.allowPrivateHosts` (one port, never a whole
 * host), and the worker's own services and listening ports are refused always. The check runs
 * on the address the socket actually connects to (see guardedLookup), so a DNS answer cannot
 * change between the check and the connect.
 *
 * This file holds the decision; what an address is comes from net-addresses.ts and which
 * services are the worker's from net-services.ts (both re-exported here for existing callers).
 */
import { parseHostEntry, urlHostname } from '../../deterministic/allow-hosts';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress, embeddedIpv4, isThisMachine, normaliseAddress } from './net-addresses';
import type { ServiceAddress } from './net-services';
import type { OwnPortLookup } from './own-ports';


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
