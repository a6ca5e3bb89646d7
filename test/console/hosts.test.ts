/**
 * The Host names the console answers to. Bound to every interface it answers to the machine's
 * addresses and name, and refuses any other name (a DNS-rebinding page names its own): the real
 * server on 0.0.0.0, asked through a real socket with each Host header.
 */
import { request } from 'node:http';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allowedHosts } from '../../console/security';
import { startConsole, type ConsoleServer } from '../../console/server';

const machine = { addresses: ['192.0.2.7', 'fe80::1', '127.0.0.1', '::1'], hostname: 'Build-Box' };

describe('allowedHosts', () => {
  it('a loopback bind answers to the loopback names only', () => {
    expect([...allowedHosts('127.0.0.1', 80, machine)].sort()).toEqual(['127.0.0.1:80', '[::1]:80', 'localhost:80']);
    expect(allowedHosts('::1', 80, machine).has('[::1]:80')).toBe(true);
  });

  it('a wildcard bind answers to every address of the machine and its name, and to no other name', () => {
    for (const bind of ['0.0.0.0', '::']) {
      const hosts = allowedHosts(bind, 8080, machine);
      for (const h of ['192.0.2.7:8080', '[fe80::1]:8080', 'build-box:8080', 'localhost:8080', '127.0.0.1:8080', '[::1]:8080']) expect(hosts.has(h), h).toBe(true);
      for (const h of ['rebound.example:8080', '192.0.2.8:8080', '192.0.2.7:8081', 'Build-Box.evil:8080']) expect(hosts.has(h), h).toBe(false);
    }
  });

  it('a bind to one address answers to that address only', () => {
    expect([...allowedHosts('192.0.2.7', 80, machine)]).toEqual(['192.0.2.7:80']);
  });
});

describe('a console bound to 0.0.0.0', () => {
  let server: ConsoleServer;
  let port: number;
  // Turned away at the Host or the token check, before anything reads the harness.
  beforeAll(async () => {
    server = await startConsole({} as never, { host: '0.0.0.0', port: 0, token: 'hosts-test-token-0123456789abcdef' });
    port = Number(new URL(server.base).port);
  });
  afterAll(async () => server?.close());

  /** The status of GET /api/sessions with this Host header, sent to 127.0.0.1. */
  const statusFor = (host: string) =>
    new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/api/sessions', headers: { Host: host } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });

  it("answers to the machine's own addresses (then asks for the token) and refuses another name", async () => {
    const own = Object.values(os.networkInterfaces()).flatMap((l) => (l ?? []).filter((i) => i.family === 'IPv4').map((i) => i.address));
    for (const a of own) expect(await statusFor(`${a}:${port}`), a).toBe(401);
    expect(await statusFor(`localhost:${port}`)).toBe(401);
    expect(await statusFor(`${os.hostname().toLowerCase()}:${port}`)).toBe(401);
    expect(await statusFor(`rebound.example:${port}`)).toBe(421);
    expect(await statusFor(`0.0.0.0:${port}`)).toBe(401);
  });
});
