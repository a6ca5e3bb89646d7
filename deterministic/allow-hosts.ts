/**
 * Entries of `network.allowPrivateHosts`: `host:port`, `[v6]:port`. An entry opens one port of
 * one host, never all of them: a host on the LAN or this machine runs many services (the dev
 * server's metrics, a database, the worker's own scripted model), and an allowance meant for
 * one must not reach the others. Shared by the config validation (CLI) and the guard (worker).
 */
import { z } from 'zod';

/** One parsed entry; `port` is absent for a host written without one. */
interface HostEntry {
  host: string;
  port?: number;
}

/** The URL-normalised form of a host (lower case, IPv4 forms made dotted, IPv6 in brackets), or undefined. */
export function urlHostname(host: string): string | undefined {
  // Only an IPv6 address holds a colon; the URL parser wants it in brackets.
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  try {
    return new URL(`http://${bracketed}/`).hostname;
  } catch {
    return undefined;
  }
}

/** Parses `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address; undefined when it is none of them. */
export function parseHostEntry(entry: string): HostEntry | undefined {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const hostPort = /^([^:]+):(\d+)$/.exec(text);
  const [rawHost, rawPort] = bracketed ? [bracketed[1], bracketed[2]] : hostPort ? [hostPort[1], hostPort[2]] : [text, undefined];
  // The URL parser takes almost anything ("http://x/" has the host "http"): only host characters pass.
  if (!/^[A-Za-z0-9.:%_-]+$/.test(rawHost!)) return undefined;
  const host = urlHostname(rawHost!);
  if (!host) return undefined;
  return rawPort === undefined ? { host } : { host, port: Number(rawPort) };
}

/** An example entry for `host` on port 8080, as a user would write it. */
function withExamplePort(host: string): string {
  return `${host}:8080`;
}

/**
 * One allowPrivateHosts entry. A zod custom issue carries a `hint` in its params, which the
 * config loader prints as the hint line.
 */
export const allowPrivateHostSchema = z
  .string()
  .min(1)
  .max(255)
  .superRefine((entry, ctx) => {
    const parsed = parseHostEntry(entry);
    if (!parsed) {
      ctx.addIssue({ code: 'custom', message: 'is not a host:port entry', params: { hint: 'write it as "host:port", e.g. "nas.lan:8080" or "[fd00::5]:8080"' } });
      return;
    }
    if (parsed.port === undefined) {
      // A name may resolve to anything later, so every portless entry is refused, not only IP literals.
      ctx.addIssue({
        code: 'custom',
        message: `${JSON.stringify(entry)} names no port: an allowance opens one port of a private or loopback host, never all of them`,
        params: { hint: `name its port: ${JSON.stringify(withExamplePort(entry.trim().includes(':') && !entry.trim().startsWith('[') ? `[${entry.trim()}]` : entry.trim()))} (public hosts need no entry)` },
      });
      return;
    }
    if (parsed.port < 1 || parsed.port > 65535) {
      ctx.addIssue({ code: 'custom', message: `port ${parsed.port} is not a TCP port`, params: { hint: 'use a port from 1 to 65535' } });
    }
  });
