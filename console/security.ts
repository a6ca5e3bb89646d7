/**
 * The console's gatekeeping, apart from the server so each rule can be tested alone. The console
 * can approve tool calls in every session, so it is attack surface:
 * - every API request needs the access token in an `Authorization: Bearer` header, compared in
 *   constant time; without it: 401. There is no cookie: cookies are not scoped by port, so one
 *   for 127.0.0.1 would go to every other web app on 127.0.0.1 the browser visits. The printed
 *   link carries the token in its fragment (never sent to a server); the page keeps it in
 *   sessionStorage, which belongs to its origin (scheme, host and port) alone. The page itself
 *   (HTML, script, style: nothing of a session) is served without it;
 * - the Host header must name the console's own address (a DNS-rebinding page names its own
 *   host), and a state-changing request must be a POST of JSON whose Origin is the console's
 *   own (a cross-site form or fetch carries its site's origin, or cannot send JSON at all);
 * - every response forbids framing, sniffing and any script, style or connection not its own.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import os from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A new access token: 32 random bytes, hex. */
export function newToken(): string {
  return randomBytes(32).toString('hex');
}

/** Whether `given` is the token (constant time whatever the length). */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request carries in its `Authorization: Bearer` header (a cookie counts for nothing). */
export function requestToken(req: IncomingMessage): string | undefined {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim();
  return undefined;
}

/** What the console knows of the machine for a wildcard bind: its interfaces' addresses and its name. */
interface MachineNames {
  addresses: string[];
  hostname: string;
}

function machineNames(): MachineNames {
  const addresses = Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
  return { addresses, hostname: os.hostname() };
}

const LOOPBACK = ['127.0.0.1', 'localhost', '[::1]'];

/**
 * The Host values the console answers to: its address, and `localhost` for a loopback one. Bound
 * to every interface (`0.0.0.0`, `::`), it answers to each address of the machine, its loopback
 * names and the machine's name: a page of another name that resolves here (DNS rebinding) still
 * gets 421. The names are read at start; an address the machine gets later is refused.
 */
export function allowedHosts(host: string, port: number, machine: MachineNames = machineNames()): Set<string> {
  const named = (h: string) => `${h.includes(':') && !h.startsWith('[') ? `[${h}]` : h}:${port}`;
  const hosts = new Set([named(host)]);
  if (host === '127.0.0.1' || host === '::1' || host === 'localhost') for (const h of LOOPBACK) hosts.add(named(h));
  if (host === '0.0.0.0' || host === '::') {
    for (const h of [...LOOPBACK, ...machine.addresses, machine.hostname.toLowerCase()]) hosts.add(named(h));
  }
  return hosts;
}

/** Why a state-changing request is refused (undefined: it may go on). */
export function postProblem(req: IncomingMessage, hosts: Set<string>): string | undefined {
  const origin = req.headers.origin;
  if (!origin) return 'a request that changes something must say its Origin';
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return 'the Origin is not a URL';
  }
  if (url.protocol !== 'http:' || !hosts.has(url.host)) return `cross-origin request from ${origin} refused`;
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return 'a request that changes something must send JSON';
  return undefined;
}

/** Headers every response carries. */
export function securityHeaders(res: ServerResponse): void {
  res.setHeader(
    'Content-Security-Policy',
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  );
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
}
