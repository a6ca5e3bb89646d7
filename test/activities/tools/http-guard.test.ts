import { spawn } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { httpRequest } from '../../../activities/tools/http';
import { startForeignServer, type ForeignServer } from '../../support/foreign-server';
import { AddressDeniedError, checkAddress, guardedLookup, hostAllowed, type NetPolicy, type Resolver } from '../../../activities/tools/net-guard';
import { classifyAddress, embeddedIpv4 } from '../../../activities/tools/net-addresses';
import { workerServices } from '../../../activities/tools/net-services';

/** A resolver answering from a table, as DNS would; unknown names fail like getaddrinfo. */
function fakeDns(table: Record<string, string | string[]>): Resolver {
  return (hostname) => {
    const answer = table[hostname];
    if (answer === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
    return Promise.resolve([answer].flat().map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
}

function policy(over: Partial<NetPolicy> = {}): NetPolicy {
  return { allowPrivateHosts: [], services: [], ownPorts: () => Promise.resolve(undefined), resolver: fakeDns({}), ...over };
}

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private (10.0.0.0/8)'],
    ['172.16.0.1', 'private (172.16.0.0/12)'],
    ['172.31.255.255', 'private (172.16.0.0/12)'],
    ['192.168.1.1', 'private (192.168.0.0/16)'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'this network'],
    ['0.1.2.3', 'this network'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.170', 'IETF protocol assignment'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking'],
    ['192.88.99.1', '6to4 relay'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf:ffff::1', 'link-local'],
    ['fc00::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['2001::1', 'Teredo'],
    ['100::1', 'discard-only'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['5f00::1', 'SRv6'],
  ])('classifies %s as %s', (address, label) => {
    expect(classifyAddress(address)).toContain(label);
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback', '127.0.0.1'],
    ['::ffff:7f00:1', 'loopback', '127.0.0.1'],
    ['[::ffff:7f00:1]', 'loopback', '127.0.0.1'],
    ['0:0:0:0:0:ffff:a9fe:a9fe', 'link-local', '169.254.169.254'],
    ['::ffff:0:a00:1', 'private', '10.0.0.1'],
    ['::7f00:1', 'loopback', '127.0.0.1'],
    ['::127.0.0.1', 'loopback', '127.0.0.1'],
    ['64:ff9b::7f00:1', 'loopback', '127.0.0.1'],
    ['64:ff9b::169.254.169.254', 'link-local', '169.254.169.254'],
    ['2002:c0a8:101::1', 'private', '192.168.1.1'],
  ])('judges the IPv6 form %s by the IPv4 address it embeds', (address, label, v4) => {
    expect(classifyAddress(address)).toContain(label);
    expect(classifyAddress(address)).toContain(`as ${v4}`);
  });

  it.each(['8.8.8.8', '1.1.1.1', '11.0.0.1', '172.32.0.1', '100.128.0.1', '169.255.0.1', '192.169.0.1', '223.255.255.255', '2606:4700:4700::1111', '64:ff9b::808:808', '2002:808:808::1'])(
    'lets the public address %s through',
    (address) => {
      expect(classifyAddress(address)).toBeUndefined();
    },
  );

  it('refuses an IPv4-compatible address even when the IPv4 inside is public', () => {
    expect(classifyAddress('::808:808')).toContain('IPv4-compatible');
  });
});

describe('embeddedIpv4', () => {
  it('does not read :: and ::1 as the IPv4 addresses 0.0.0.0 and 0.0.0.1', () => {
    expect(embeddedIpv4('::')).toBeUndefined();
    expect(embeddedIpv4('::1')).toBeUndefined();
    expect(classifyAddress('::1')).toBe('a loopback address');
  });

  it('leaves ordinary IPv6 addresses alone', () => {
    expect(embeddedIpv4('2606:4700:4700::1111')).toBeUndefined();
  });
});

describe('hostAllowed', () => {
  it('matches a host:port entry on that port only', () => {
    expect(hostAllowed(['intranet.test:8080'], 'intranet.test', 8080)).toBe(true);
    expect(hostAllowed(['intranet.test:8080'], 'intranet.test', 8081)).toBe(false);
    expect(hostAllowed(['intranet.test:8080'], 'other.test', 8080)).toBe(false);
  });

  it('never matches an entry without a port (a session started before the config refused them keeps nothing open)', () => {
    expect(hostAllowed(['intranet.test'], 'intranet.test', 8080)).toBe(false);
    expect(hostAllowed(['127.0.0.1'], '127.0.0.1', 80)).toBe(false);
    expect(hostAllowed(['localhost', '::1', '[::1]'], 'localhost', 3000)).toBe(false);
    expect(hostAllowed(['::1', '[::1]'], '[::1]', 3000)).toBe(false);
  });

  it('normalises entries as the URL parser normalises hosts', () => {
    expect(hostAllowed(['InTraNet.Test:80'], 'intranet.test', 80)).toBe(true);
    expect(hostAllowed(['0x7f.1:80'], '127.0.0.1', 80)).toBe(true);
    expect(hostAllowed(['[::1]:8080'], '[::1]', 8080)).toBe(true);
    expect(hostAllowed(['[::1]:8080'], '[::1]', 80)).toBe(false);
  });

  it('does not treat a name and the address it resolves to as the same host', () => {
    expect(hostAllowed(['localhost:80'], '127.0.0.1', 80)).toBe(false);
  });

  it('ignores entries that are not hosts', () => {
    expect(hostAllowed(['http://x/ y', ''], 'x', 80)).toBe(false);
  });
});

describe('workerServices', () => {
  it('lists the embedded dev server, its UI, its HTTP API and its metrics on their default ports', () => {
    expect(workerServices({})).toEqual([
      { host: '127.0.0.1', port: 7233, name: 'Temporal server' },
      { host: '127.0.0.1', port: 8233, name: 'Temporal Web UI' },
      { host: '127.0.0.1', port: 8234, name: 'Temporal HTTP API' },
      { host: '127.0.0.1', port: 8235, name: 'Temporal metrics' },
    ]);
  });

  it('derives the UI, HTTP API and metrics ports from HARNESS_EMBEDDED_PORT unless set', () => {
    expect(workerServices({ HARNESS_EMBEDDED_PORT: '9000' }).map((s) => s.port)).toEqual([9000, 10000, 10001, 10002]);
    expect(workerServices({ HARNESS_EMBEDDED_PORT: '9000', HARNESS_UI_PORT: '9500' }).map((s) => s.port)).toEqual([9000, 9500, 9501, 9502]);
    expect(workerServices({ HARNESS_EMBEDDED_PORT: '9000', HARNESS_HTTP_PORT: '9700' }).map((s) => s.port)).toEqual([9000, 10000, 9700, 9701]);
    expect(workerServices({ HARNESS_EMBEDDED_PORT: '9000', HARNESS_METRICS_PORT: '9900' }).map((s) => s.port)).toEqual([9000, 10000, 10001, 9900]);
    // At the top of the range the metrics port goes below the UI and HTTP API ports, clear of both.
    expect(workerServices({ HARNESS_UI_PORT: '65535' }).map((s) => s.port)).toEqual([7233, 65535, 65534, 65533]);
  });

  it('adds TEMPORAL_ADDRESS and the host and port of DATABASE_URL, with their default ports', () => {
    const services = workerServices({ TEMPORAL_ADDRESS: 'Temporal.Internal', DATABASE_URL: 'postgres://u:p@DB.internal/memory' }).slice(4);
    expect(services).toEqual([
      { host: 'temporal.internal', port: 7233, name: 'Temporal server' },
      { host: 'db.internal', port: 5432, name: 'memory database' },
    ]);
    expect(workerServices({ TEMPORAL_ADDRESS: '10.0.0.5:7000', DATABASE_URL: 'postgres://[fd00::5]:6543/m' }).slice(4)).toEqual([
      { host: '10.0.0.5', port: 7000, name: 'Temporal server' },
      { host: '[fd00::5]', port: 6543, name: 'memory database' },
    ]);
  });

  it('adds the OTLP receiver turns are exported to (it holds every exported trace)', () => {
    expect(workerServices({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:6006' }).slice(4)).toEqual([{ host: '127.0.0.1', port: 6006, name: 'trace receiver (OTLP)' }]);
    expect(workerServices({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://Collector.internal/v1/traces' }).slice(4)).toEqual([
      { host: 'collector.internal', port: 443, name: 'trace receiver (OTLP)' },
    ]);
    expect(workerServices({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toHaveLength(4);
  });

  it('skips a DATABASE_URL without a host (a Unix socket) or that is not a URL', () => {
    expect(workerServices({ DATABASE_URL: 'postgres:///memory' })).toHaveLength(4);
    expect(workerServices({ DATABASE_URL: 'host=db dbname=memory' })).toHaveLength(4);
  });
});

describe('checkAddress', () => {
  it('refuses a private address unless the host and port are allowed', async () => {
    await expect(checkAddress(policy(), 'nas.lan', '192.168.1.10', 80)).rejects.toMatchObject({ allowable: true });
    await expect(checkAddress(policy({ allowPrivateHosts: ['nas.lan:80'] }), 'nas.lan', '192.168.1.10', 80)).resolves.toBeUndefined();
    await expect(checkAddress(policy({ allowPrivateHosts: ['nas.lan:80'] }), 'nas.lan', '192.168.1.10', 8080)).rejects.toMatchObject({ allowable: true });
    await expect(checkAddress(policy({ allowPrivateHosts: ['nas.lan'] }), 'nas.lan', '192.168.1.10', 80)).rejects.toMatchObject({ allowable: true });
  });

  it("refuses the worker's own ports on every address of this machine, allowed or not, but not elsewhere", async () => {
    const p = policy({ allowPrivateHosts: ['127.0.0.1:4000', '0.0.0.0:4000', '10.1.2.3:4000'], ownPorts: (port) => Promise.resolve(port === 4000 ? 'scripted model server' : undefined) });
    await expect(checkAddress(p, '127.0.0.1', '127.0.0.1', 4000)).rejects.toMatchObject({ allowable: false, reason: "the worker's own scripted model server on port 4000" });
    await expect(checkAddress(p, '0.0.0.0', '0.0.0.0', 4000)).rejects.toMatchObject({ allowable: false });
    await expect(checkAddress(p, '[::1]', '::1', 4000)).rejects.toMatchObject({ allowable: false });
    // Another machine's port 4000 is not the worker's.
    await expect(checkAddress(p, '10.1.2.3', '10.1.2.3', 4000)).resolves.toBeUndefined();
  });

  it('refuses a remote worker service by its name and by any name resolving to its address', async () => {
    const p = policy({
      allowPrivateHosts: ['db.internal:5432', 'alias.internal:5432', 'alias.internal:80'],
      services: [{ host: 'db.internal', port: 5432, name: 'memory database' }],
      resolver: fakeDns({ 'db.internal': '10.0.0.5' }),
    });
    await expect(checkAddress(p, 'db.internal', '10.0.0.9', 5432)).rejects.toMatchObject({ allowable: false, reason: "the worker's own memory database on port 5432" });
    await expect(checkAddress(p, 'alias.internal', '10.0.0.5', 5432)).rejects.toMatchObject({ allowable: false });
    await expect(checkAddress(p, 'alias.internal', '::ffff:10.0.0.5', 5432)).rejects.toMatchObject({ allowable: false });
    await expect(checkAddress(p, 'alias.internal', '10.0.0.5', 80)).resolves.toBeUndefined();
  });

  it('refuses a public worker service even though public addresses are otherwise fine', async () => {
    const p = policy({ services: [{ host: 'ns.tmprl.test', port: 7233, name: 'Temporal server' }], resolver: fakeDns({ 'ns.tmprl.test': '203.0.114.10' }) });
    await expect(checkAddress(p, 'mirror.test', '203.0.114.10', 7233)).rejects.toBeInstanceOf(AddressDeniedError);
    await expect(checkAddress(p, 'mirror.test', '203.0.114.11', 7233)).resolves.toBeUndefined();
  });
});

describe('guardedLookup', () => {
  const lookupWith = (p: NetPolicy, host: string, options: { all: boolean; family?: number | 'IPv4' | 'IPv6' }) =>
    new Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>((resolve) => {
      guardedLookup(p, host, 80)(host, options, (err, address, family) => resolve({ err, address, family }));
    });

  it('hands the socket only the public answers of a name that also resolves to private addresses', async () => {
    const p = policy({ resolver: fakeDns({ 'mixed.test': ['127.0.0.1', '203.0.114.7', '10.0.0.1', '2606:4700::6810:1'] }) });
    expect(await lookupWith(p, 'mixed.test', { all: true })).toEqual({
      err: null,
      address: [
        { address: '203.0.114.7', family: 4 },
        { address: '2606:4700::6810:1', family: 6 },
      ],
      family: undefined,
    });
    expect(await lookupWith(p, 'mixed.test', { all: false, family: 6 })).toEqual({ err: null, address: '2606:4700::6810:1', family: 6 });
    expect(await lookupWith(p, 'mixed.test', { all: false, family: 'IPv6' })).toEqual({ err: null, address: '2606:4700::6810:1', family: 6 });
  });

  it('fails with AddressDeniedError naming the name and the address when every answer is refused', async () => {
    const { err } = await lookupWith(policy({ resolver: fakeDns({ 'evil.test': ['127.0.0.1', '::1'] }) }), 'evil.test', { all: true });
    expect(err).toBeInstanceOf(AddressDeniedError);
    expect(err?.message).toBe('evil.test resolves to 127.0.0.1, a loopback address');
  });

  it('passes resolver failures through', async () => {
    const { err } = await lookupWith(policy(), 'nowhere.test', { all: true });
    expect(err).toMatchObject({ code: 'ENOTFOUND' });
  });
});

// End to end: real requests to a loopback server of another process (see support/foreign-server.ts),
// which stands for every private destination the user may allow.
describe('httpRequest address guard', () => {
  let foreign: ForeignServer;
  let port: number;

  beforeAll(async () => {
    foreign = await startForeignServer('secret');
    port = foreign.port;
  });

  afterAll(async () => {
    await foreign?.stop();
  });

  beforeEach(async () => {
    await foreign.takeHits();
  });

  it('refuses loopback by default as PERMISSION_DENIED saying how a user allows the host and port', async () => {
    const r = await httpRequest({ url: `http://127.0.0.1:${port}/` });
    expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED', message: `http_request to 127.0.0.1:${port} refused: 127.0.0.1 is a loopback address` });
    expect(r.suggestion).toContain('network.allowPrivateHosts in harness.config.json');
    expect(r.suggestion).toContain(`"127.0.0.1:${port}"`);
    expect(await foreign.takeHits()).toBe(0);
  });

  it('names the implicit port in the entry it suggests', async () => {
    const r = await httpRequest({ url: 'http://192.168.1.1/admin', timeout_ms: 2000 });
    expect(r.suggestion).toContain('"192.168.1.1:80"');
  });

  it("reaches another process's loopback port only when that host and port are allowed", async () => {
    expect(await httpRequest({ url: `http://127.0.0.1:${port}/` }, { allowPrivateHosts: [`127.0.0.1:${port}`] })).toMatchObject({ ok: true, result: { body: 'secret' } });
    expect(await foreign.takeHits()).toBe(1);
    // Without a port an entry opens nothing (the config refuses it; a session that predates that rule keeps nothing open).
    expect(await httpRequest({ url: `http://127.0.0.1:${port}/` }, { allowPrivateHosts: ['127.0.0.1'] })).toMatchObject({ error_type: 'PERMISSION_DENIED' });
    expect(await httpRequest({ url: `http://127.0.0.1:${port}/` }, { allowPrivateHosts: [`127.0.0.1:${port + 1}`] })).toMatchObject({ error_type: 'PERMISSION_DENIED' });
    expect(await foreign.takeHits()).toBe(0);
  });

  it.each([
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local'],
    ['IPv6 loopback', () => `http://[::1]:${port}/`, '::1 is a loopback'],
    ['an IPv4-mapped IPv6 loopback', () => `http://[::ffff:127.0.0.1]:${port}/`, '::ffff:7f00:1 is a loopback address (as 127.0.0.1)'],
    ['0.0.0.0', () => `http://0.0.0.0:${port}/`, '"this network"'],
    ['a decimal IPv4 loopback', () => `http://2130706433:${port}/`, '127.0.0.1 is a loopback'],
    ['a hex-and-short IPv4 loopback', () => `http://0x7f.1:${port}/`, '127.0.0.1 is a loopback'],
    ['an octal IPv4 loopback', () => `http://0177.0.0.1:${port}/`, '127.0.0.1 is a loopback'],
  ])('refuses %s', async (_what, url, reason) => {
    // A short timeout: without the guard the metadata address would just hang offline.
    const r = await httpRequest({ url: url(), timeout_ms: 2000 });
    expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(r.message).toContain(reason);
    expect(await foreign.takeHits()).toBe(0);
  });

  it('refuses a public-looking name whose DNS answer is 127.0.0.1 (DNS rebinding)', async () => {
    const r = await httpRequest({ url: `http://api.example.com:${port}/` }, { resolver: fakeDns({ 'api.example.com': '127.0.0.1' }) });
    expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED', message: `http_request to api.example.com:${port} refused: api.example.com resolves to 127.0.0.1, a loopback address` });
    expect(await foreign.takeHits()).toBe(0);
  });

  it('reaches a private name in allowPrivateHosts on its port, and allowing a name does not allow its address or its other ports', async () => {
    const resolver = fakeDns({ 'intranet.test': '127.0.0.1' });
    expect(await httpRequest({ url: `http://intranet.test:${port}/` }, { resolver, allowPrivateHosts: [`intranet.test:${port}`] })).toMatchObject({ ok: true });
    expect(await httpRequest({ url: `http://127.0.0.1:${port}/` }, { resolver, allowPrivateHosts: [`intranet.test:${port}`] })).toMatchObject({ error_type: 'PERMISSION_DENIED' });
    // A name without a port may resolve to any private address later: it opens no port at all.
    expect(await httpRequest({ url: `http://intranet.test:${port}/` }, { resolver, allowPrivateHosts: ['intranet.test'] })).toMatchObject({ error_type: 'PERMISSION_DENIED' });
    expect(await foreign.takeHits()).toBe(1);
  });

  it('does not let a connection opened for an allowed request serve a later one that is not allowed', async () => {
    const resolver = fakeDns({ 'intranet.test': '127.0.0.1' });
    const url = `http://intranet.test:${port}/`;
    expect(await httpRequest({ url }, { resolver, allowPrivateHosts: [`intranet.test:${port}`] })).toMatchObject({ ok: true });
    expect(await httpRequest({ url }, { resolver })).toMatchObject({ error_type: 'PERMISSION_DENIED' });
    expect(await foreign.takeHits()).toBe(1);
  });

  describe('with the port as one of the worker services', () => {
    const services = () => [{ host: '127.0.0.1', port, name: 'Temporal Web UI' }];

    it.each([
      ['its own address', () => `http://127.0.0.1:${port}/api/v1/namespaces/default/workflows`, () => [`127.0.0.1:${port}`]],
      ['a name resolving to it', () => `http://localhost:${port}/`, () => [`localhost:${port}`]],
      ['0.0.0.0', () => `http://0.0.0.0:${port}/`, () => [`0.0.0.0:${port}`]],
      ['another loopback address', () => `http://127.0.0.2:${port}/`, () => [`127.0.0.2:${port}`]],
      ['its IPv4-mapped form', () => `http://[::ffff:127.0.0.1]:${port}/`, () => [`[::ffff:127.0.0.1]:${port}`]],
    ])('refuses it by %s even when that host and port are in allowPrivateHosts', async (_how, url, allowPrivateHosts) => {
      const r = await httpRequest({ url: url() }, { allowPrivateHosts: allowPrivateHosts(), workerServices: services(), resolver: fakeDns({ localhost: '127.0.0.1' }) });
      expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
      expect(r.message).toContain(`the worker's own Temporal Web UI on port ${port}`);
      expect(r.suggestion).not.toContain('allowPrivateHosts');
      expect(await foreign.takeHits()).toBe(0);
    });

    it('still reaches other allowed ports of the same host', async () => {
      const r = await httpRequest({ url: `http://127.0.0.1:${port}/` }, { allowPrivateHosts: [`127.0.0.1:${port}`], workerServices: [{ host: '127.0.0.1', port: port + 1, name: 'Temporal server' }] });
      expect(r).toMatchObject({ ok: true });
    });
  });
});

// The test process plays the worker here: what it listens on, or any process it started, is the worker's own.
describe("httpRequest and the worker's own listening ports", () => {
  const listen = async (): Promise<{ server: http.Server; port: number; hits: () => number }> => {
    let count = 0;
    const server = http.createServer((_req, res) => {
      count++;
      res.end('the worker');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, port: (server.address() as AddressInfo).port, hits: () => count };
  };
  const close = async (server: http.Server) => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };

  it('refuses a port this process listens on even when it is allowed by host and port, with a reason the user cannot lift', async () => {
    const own = await listen();
    try {
      for (const host of ['127.0.0.1', 'localhost', '0.0.0.0', '[::ffff:127.0.0.1]']) {
        const r = await httpRequest({ url: `http://${host}:${own.port}/` }, { allowPrivateHosts: [`${host}:${own.port}`], resolver: fakeDns({ localhost: '127.0.0.1' }) });
        expect(r, host).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
        expect(r.message).toMatch(new RegExp(`the worker's own .*process \\(pid ${process.pid}\\) on port ${own.port}$`));
        expect(r.suggestion).toBe('this address is never reachable from http_request; do without it');
      }
      expect(own.hits()).toBe(0);
    } finally {
      await close(own.server);
    }
  });

  it('finds a port opened just after an earlier request looked (no stale answer)', async () => {
    // The first request reads the listening ports; the listener opened right after must still be seen.
    expect(await httpRequest({ url: `http://127.0.0.1:1/` }, { allowPrivateHosts: ['127.0.0.1:1'], timeout_ms: 2000 })).toMatchObject({ error_type: 'HTTP_ERROR' });
    const own = await listen();
    try {
      const r = await httpRequest({ url: `http://127.0.0.1:${own.port}/` }, { allowPrivateHosts: [`127.0.0.1:${own.port}`] });
      expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
      expect(own.hits()).toBe(0);
    } finally {
      await close(own.server);
    }
  });

  it('refuses a port a child process of this process listens on, allowed or not', async () => {
    const child = spawn(process.execPath, ['-e', "const s = require('node:http').createServer((q, r) => r.end('child')).listen(0, '127.0.0.1', () => console.log(s.address().port))"], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const childPort = Number(await new Promise<string>((resolve) => child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()))));
      const r = await httpRequest({ url: `http://127.0.0.1:${childPort}/` }, { allowPrivateHosts: [`127.0.0.1:${childPort}`] });
      expect(r).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
      expect(r.message).toContain(`node process (pid ${child.pid}) on port ${childPort}`);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
