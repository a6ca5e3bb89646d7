/**
 * The deployment files, checked on a machine with no image registry (docker pull fails here):
 *
 * - docker-compose.yml is valid for the installed Compose (`docker-compose config`, Debian's 1.29
 *   from scripts/setup-compose.sh, or the `docker compose` plugin), with the services the stack
 *   needs, the workers' data folder at the same path on both sides, the Postgres port published,
 *   model keys taken from the environment, and no deprecated temporalio/auto-setup image.
 * - The worker image builds from the repository's Dockerfile without a registry: its BASE is a
 *   local image made here from the sandbox image (a Debian bookworm rootfs, sandbox/) plus this
 *   machine's Node binary, its npm and its CA bundle (this machine reaches the npm registry
 *   through a TLS-inspecting proxy), kept between runs under a name keyed by all of those. npm ci
 *   inside the build reaches the npm registry.
 * - The built image runs: `--version`, `harness worker --help`, the entrypoint's non-root user
 *   with the Docker socket's group, HARNESS_HOME under the same-path data folder, and skills
 *   resolved to a folder that exists on the host, which is what the engine will bind-mount.
 * - As a worker (run as the compose file runs it: socket, same-path data folder, DATABASE_URL,
 *   but on the host network against the suite's Temporal dev server) it completes a turn whose
 *   run_shell runs in a sandbox on the host's engine: the file lands in the workspace on the host,
 *   the shipped skills are mounted, and `trace --full` on the host reads the payloads.
 *
 * What it does not do: start the stack (its Temporal, Postgres and UI images need a registry).
 * A missing tool (Docker, Compose, the sandbox image) is a failure with a hint, never a skip.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { cliEnv, describeResult, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { adoptHome } from '../../machine/home-mark';
import { figure } from '../support/figures';

const ROOT = path.resolve(__dirname, '..', '..');
const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');
const DOCKERFILE = path.join(ROOT, 'Dockerfile');
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const SANDBOX_IMAGE = process.env.HARNESS_SANDBOX_IMAGE || 'harness-sandbox:latest';
/** The local base image (cached between runs) and this run's worker image (removed at the end). */
const BASE_REPO = 'harness-test-node-base';
const RUN_ID = randomBytes(4).toString('hex');
const WORKER_IMAGE = `harness-test-worker:${RUN_ID}`;
const SOCKET = '/var/run/docker.sock';
/** The Postgres the suite uses (as test/support/harness.ts): the worker's message store, as DATABASE_URL is in compose. */
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (no shell), killing it after timeoutMs. */
function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const show = (r: Result, what: string) => `${what}: exit ${r.code}\n--- stdout\n${r.stdout.slice(-4000)}\n--- stderr\n${r.stderr.slice(-4000)}`;

/** Whether a program is on PATH. */
async function onPath(program: string): Promise<boolean> {
  const r = await run('sh', ['-c', `command -v ${program}`]).catch(() => undefined);
  return r?.code === 0;
}

/** The installed Compose: Debian's docker-compose (1.29), else the `docker compose` plugin. */
async function findCompose(): Promise<string[]> {
  if (await onPath('docker-compose')) {
    const r = await run('docker-compose', ['version', '--short']);
    if (r.code === 0) return ['docker-compose'];
  }
  if (await onPath('docker')) {
    const r = await run('docker', ['compose', 'version', '--short']);
    if (r.code === 0) return ['docker', 'compose'];
  }
  throw new Error('no Docker Compose found (neither docker-compose nor `docker compose`)\nhint: run `bash scripts/setup-compose.sh` (npm run setup does)');
}

/** The environment Compose interpolates with: nothing of the developer's shell that the file reads. */
function composeEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  const text = readFileSync(COMPOSE_FILE, 'utf8');
  for (const name of new Set([...text.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!))) delete env[name];
  for (const name of ['OPENAI_API_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_BASE_URL', 'HARNESS_MODEL_KEYS', 'HARNESS_HOST_ID', 'COMPOSE_FILE', 'COMPOSE_PROJECT_NAME', 'DOCKER_HOST']) delete env[name];
  return { ...env, ...extra };
}

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile?: string; args?: Record<string, string> };
  environment?: Record<string, string | null>;
  volumes?: (string | { type?: string; source?: string; target?: string; read_only?: boolean })[];
  ports?: (string | { host_ip?: string; published?: number | string; target: number })[];
  deploy?: { replicas?: number };
  depends_on?: Record<string, { condition: string }>;
  entrypoint?: string[];
  init?: boolean;
  stop_grace_period?: string;
}

/** `compose config` of the file, parsed (Compose prints the resolved file as YAML). */
async function composeConfig(compose: string[], env: NodeJS.ProcessEnv): Promise<{ services: Record<string, ComposeService> }> {
  const r = await run(compose[0]!, [...compose.slice(1), '-f', COMPOSE_FILE, '--project-directory', ROOT, 'config'], { env });
  expect(r.code, show(r, `${compose.join(' ')} config`)).toBe(0);
  return parseYaml(r.stdout) as { services: Record<string, ComposeService> };
}

/** A service's volumes as source and target (Compose 1.29 prints `source:target:mode`, the plugin the long form). */
function volumes(svc: ComposeService): { source: string; target: string }[] {
  return (svc.volumes ?? []).map((v) => {
    if (typeof v !== 'string') return { source: v.source ?? '', target: v.target ?? '' };
    const [source = '', target = ''] = v.split(':');
    return { source, target };
  });
}

/** Published ports of a service as `[ip:]host:container`, whichever form Compose printed. */
function published(svc: ComposeService): string[] {
  return (svc.ports ?? []).map((p) => (typeof p === 'string' ? p.replace(/\/tcp$/, '') : `${p.host_ip ? `${p.host_ip}:` : ''}${p.published}:${p.target}`));
}

describe('docker-compose.yml, validated by the installed Compose', () => {
  let compose: string[] = [];

  beforeAll(async () => {
    compose = await findCompose();
  });

  it('is valid and has the stack: Postgres, schema job, Temporal server, namespace job, UI, sandbox image job, workers', async () => {
    const { services } = await composeConfig(compose, composeEnv());
    expect(Object.keys(services).sort()).toEqual(['postgres', 'sandbox-image', 'temporal', 'temporal-namespace', 'temporal-schema', 'temporal-ui', 'worker']);

    // The plain server image, its schema set up by admin-tools of the same release; never auto-setup.
    const text = readFileSync(COMPOSE_FILE, 'utf8');
    for (const [name, svc] of Object.entries(services)) expect(svc.image ?? '', name).not.toMatch(/auto-setup/);
    expect(text).not.toMatch(/^\s*image:.*auto-setup/m);
    const serverTag = services.temporal!.image!.split(':')[1]!;
    expect(services.temporal!.image).toMatch(/^temporalio\/server:1\.(2\d|3\d)\.\d+$/);
    expect(services['temporal-schema']!.image).toBe(`temporalio/admin-tools:${serverTag}`);
    expect(services['temporal-namespace']!.image).toBe(`temporalio/admin-tools:${serverTag}`);
    expect(services['temporal-ui']!.image).toMatch(/^temporalio\/ui:\d+\.\d+\.\d+$/);
    expect(services.temporal!.depends_on?.['temporal-schema']?.condition).toBe('service_completed_successfully');
    expect(services.temporal!.environment?.DB).toBe('postgres12');

    // The schema job: temporal-sql-tool against both stores, create + setup-schema + update-schema.
    const schemaScript = readFileSync(path.join(ROOT, 'deploy', 'temporal', 'setup-schema.sh'), 'utf8');
    for (const step of ['--plugin postgres12', 'create-database', 'setup-schema -v 0.0', 'update-schema -d "$schema/$store/versioned"', ':visibility', 'temporal_visibility'])
      expect(schemaScript).toContain(step);
    expect(services['temporal-schema']!.entrypoint).toEqual(['/bin/sh', '/deploy/setup-schema.sh']);

    // Postgres: published on the host (for `trace --full`), kept in a volume.
    const pg = services.postgres!;
    expect(published(pg), 'published Postgres port').toContain('127.0.0.1:5433:5432');
    expect(volumes(pg).map((v) => v.target)).toContain('/var/lib/postgresql/data');
    expect(published(services.temporal!).some((p) => /:7233:7233/.test(p))).toBe(true);

    // The sandbox image is built on the engine the workers use before they start.
    expect(services['sandbox-image']!.image).toBe('harness-sandbox:latest');
    expect(services['sandbox-image']!.build?.context).toBe(path.join(ROOT, 'sandbox'));
    expect(services.worker!.depends_on?.['sandbox-image']?.condition).toBe('service_completed_successfully');
    expect(services.worker!.depends_on?.['temporal-namespace']?.condition).toBe('service_completed_successfully');
  }, 60_000);

  it('runs N workers built from the repository Dockerfile, with the data folder at the same path on the host and in the worker, and the Docker socket', async () => {
    const { services } = await composeConfig(compose, composeEnv());
    const w = services.worker!;
    expect(w.build?.context).toBe(ROOT);
    expect(path.resolve(ROOT, w.build?.dockerfile ?? 'Dockerfile')).toBe(DOCKERFILE);
    expect(w.build?.args?.BASE).toBe('node:20-bookworm-slim');
    expect(w.deploy?.replicas).toBe(2);
    expect(w.init).toBe(true);
    expect(w.stop_grace_period).toBeDefined();
    const env = w.environment ?? {};
    expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(env.DATABASE_URL).toMatch(/^postgres:\/\/[^@]+@postgres:5432\/harness$/);
    expect(env.HARNESS_DATA).toBe('/var/lib/harness');
    expect(volumes(w)).toContainEqual({ source: '/var/lib/harness', target: '/var/lib/harness' });
    expect(volumes(w)).toContainEqual({ source: SOCKET, target: SOCKET });

    // Moved elsewhere, both sides of the mount move together, and the worker is told where.
    const moved = await composeConfig(compose, composeEnv({ HARNESS_DATA: '/srv/harness-data', HARNESS_WORKERS: '5' }));
    const mw = moved.services.worker!;
    expect(volumes(mw)).toContainEqual({ source: '/srv/harness-data', target: '/srv/harness-data' });
    expect(mw.environment?.HARNESS_DATA).toBe('/srv/harness-data');
    expect(mw.deploy?.replicas).toBe(5);
  }, 60_000);

  it('takes model keys from the environment of compose, and bakes none into the file', async () => {
    const text = readFileSync(COMPOSE_FILE, 'utf8');
    expect(text).not.toMatch(/sk-[A-Za-z0-9]/);
    const without = (await composeConfig(compose, composeEnv())).services.worker!.environment ?? {};
    for (const key of ['OPENAI_API_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_BASE_URL']) {
      // Named without a value: passed through from the environment, unset when it is unset.
      expect(text).toMatch(new RegExp(`^\\s+${key}:\\s*$`, 'm'));
      expect(without[key] ?? '', key).toBe('');
    }
    const sentinel = { OPENAI_API_KEY: 'test-openai-sentinel', DEEPSEEK_API_KEY: 'test-deepseek-sentinel', OPENAI_BASE_URL: 'https://models.example.test/v1' };
    const withKeys = (await composeConfig(compose, composeEnv(sentinel))).services.worker!.environment ?? {};
    for (const [key, value] of Object.entries(sentinel)) expect(withKeys[key], key).toBe(value);
    // Only the workers get them.
    const all = (await composeConfig(compose, composeEnv(sentinel))).services;
    for (const [name, svc] of Object.entries(all)) {
      if (name === 'worker') continue;
      expect(Object.values(svc.environment ?? {}), name).not.toContain('test-openai-sentinel');
    }
  }, 60_000);
});

describe('the worker image, built and run without an image registry', () => {
  let buildEnv: NodeJS.ProcessEnv = process.env;
  let base = '';
  let built = false;
  let baseLabel = '';
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'harness-deploy-'));
  // The data folder, mounted at the same path in the container (as docker-compose.yml does).
  const data = path.join(scratch, 'data');
  /** Containers this file started (removed at the end whatever happened). */
  const containers: string[] = [];

  const docker = (args: string[], timeoutMs = 60_000) => run('docker', args, { env: buildEnv, timeoutMs });

  beforeAll(async () => {
    if (!(await onPath('docker'))) throw new Error('docker not found\nhint: run `bash scripts/setup-docker.sh` (npm run setup does)');
    const info = await run('docker', ['info', '--format', '{{.ServerVersion}}']);
    if (info.code !== 0) throw new Error(`the Docker Engine does not answer: ${info.stderr.trim()}\nhint: run \`bash scripts/setup-docker.sh\``);
    // Without the buildx plugin the client's default builder is missing: use the classic one.
    const buildx = await run('docker', ['buildx', 'version']);
    buildEnv = { ...process.env, ...(buildx.code === 0 ? {} : { DOCKER_BUILDKIT: '0' }) };
    const sandboxId = (await run('docker', ['image', 'inspect', '--format', '{{.Id}}', SANDBOX_IMAGE])).stdout.trim();
    if (!sandboxId) throw new Error(`image ${SANDBOX_IMAGE} missing (the local base is made from it)\nhint: run \`bash scripts/setup-docker.sh\` (or harness sandbox build)`);
    mkdirSync(data, { recursive: true });
    base = await localBase(sandboxId);
  }, 10 * 60_000);

  /**
   * A base image with Node and npm, from what is on this machine: the sandbox image (Debian
   * bookworm: glibc, libstdc++, useradd, setpriv), `which node`, `npm root -g`/npm and the CA
   * bundle Node is told to trust. Named by a hash of all of them, so it is built once and kept.
   */
  async function localBase(sandboxId: string): Promise<string> {
    const node = realpathSync((await run('sh', ['-c', 'command -v node'])).stdout.trim());
    const nodeVersion = (await run(node, ['--version'])).stdout.trim();
    const [major = 0, minor = 0] = nodeVersion.replace(/^v/, '').split('.').map(Number);
    expect(major > 20 || (major === 20 && minor >= 19), `node ${nodeVersion} at ${node}: the image needs >= 20.19`).toBe(true);
    const npmRoot = (await run('npm', ['root', '-g'])).stdout.trim();
    const npmDir = path.join(npmRoot, 'npm');
    if (!existsSync(path.join(npmDir, 'bin', 'npm-cli.js'))) throw new Error(`npm not found under ${npmRoot}\nhint: install npm next to node`);
    const npmVersion = (JSON.parse(readFileSync(path.join(npmDir, 'package.json'), 'utf8')) as { version: string }).version;
    const registry = (await run('npm', ['config', 'get', 'registry'])).stdout.trim() || 'https://registry.npmjs.org/';
    const caFile = [process.env.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt'].find((f) => f && existsSync(f));
    const ca = caFile ? readFileSync(caFile) : undefined;
    const dockerfile = [
      `FROM ${SANDBOX_IMAGE}`,
      'USER root',
      'COPY node /usr/local/bin/node',
      'COPY npm /usr/local/lib/node_modules/npm',
      ...(ca ? ['COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt'] : []),
      'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version && npm --version',
      `ENV NPM_CONFIG_REGISTRY=${registry}${ca ? ' NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' : ''}`,
      'WORKDIR /',
      'CMD ["node"]',
    ].join('\n');
    const key = createHash('sha256').update([sandboxId, nodeVersion, npmVersion, registry, ca ?? '', dockerfile].join('\0')).digest('hex').slice(0, 12);
    const tag = `${BASE_REPO}:${key}`;
    baseLabel = `harness.test.base=${key}`;
    if ((await run('docker', ['image', 'inspect', tag])).code === 0) {
      figure('deploy-compose', `local base ${tag}: reused (node ${nodeVersion}, npm ${npmVersion})`);
      return tag;
    }
    // Older bases of this test (another node, npm or sandbox image) are replaced, not kept.
    const old = (await run('docker', ['images', '--format', '{{.Repository}}:{{.Tag}}', BASE_REPO])).stdout.split('\n').filter(Boolean);
    for (const image of old) await run('docker', ['rmi', image]);
    const ctx = path.join(scratch, 'base');
    mkdirSync(ctx, { recursive: true });
    copyFileSync(node, path.join(ctx, 'node'));
    cpSync(npmDir, path.join(ctx, 'npm'), { recursive: true, dereference: true });
    if (ca) writeFileSync(path.join(ctx, 'ca-certificates.crt'), ca);
    writeFileSync(path.join(ctx, 'Dockerfile'), `${dockerfile}\nLABEL harness.sandbox=false ${baseLabel}\n`);
    const started = Date.now();
    const r = await run('docker', ['build', '-q', '-t', tag, ctx], { env: buildEnv, timeoutMs: 5 * 60_000 });
    expect(r.code, show(r, 'docker build (local base)')).toBe(0);
    figure('deploy-compose', `local base ${tag}: built in ${((Date.now() - started) / 1000).toFixed(1)} s (node ${nodeVersion}, npm ${npmVersion})`);
    return tag;
  }

  afterAll(async () => {
    // This run's image, then the build stage's leftovers (classic builder: untagged images whose
    // labels came from the base); the base itself stays for the next run.
    for (const name of containers) await run('docker', ['rm', '-f', name]);
    if (built) await run('docker', ['rmi', '-f', WORKER_IMAGE]);
    if (baseLabel) {
      const dangling = (await run('docker', ['images', '-q', '--filter', 'dangling=true', '--filter', `label=${baseLabel}`])).stdout.split('\n').filter(Boolean);
      for (const id of dangling) await run('docker', ['rmi', id]);
    }
    // The entrypoint made the data folder uid 1000's: root (the test) removes it regardless.
    rmSync(scratch, { recursive: true, force: true });
    removeTempDirs();
  }, 120_000);

  it('builds with `docker build --build-arg BASE=<local base> -f Dockerfile .` of the repository (npm ci inside)', async () => {
    const started = Date.now();
    const r = await docker(['build', '--build-arg', `BASE=${base}`, '-f', DOCKERFILE, '-t', WORKER_IMAGE, '.'], 12 * 60_000);
    built = true;
    expect(r.code, show(r, 'docker build')).toBe(0);
    const size = Number((await docker(['image', 'inspect', '--format', '{{.Size}}', WORKER_IMAGE])).stdout.trim());
    figure('deploy-compose', `worker image: built in ${((Date.now() - started) / 1000).toFixed(0)} s, ${(size / 1e6).toFixed(0)} MB (base ${base})`);
    // What .dockerignore keeps out never reaches the image.
    const ls = await docker(['run', '--rm', '--entrypoint', 'sh', WORKER_IMAGE, '-c', 'ls -a /app; ls /app/node_modules | wc -l; test -d /app/node_modules/typescript && echo has-typescript || true']);
    expect(ls.code, show(ls, 'ls /app')).toBe(0);
    for (const absent of ['.git', '.venv', '.harness', 'test-output', 'test']) expect(ls.stdout.split('\n'), absent).not.toContain(absent);
    expect(ls.stdout).toContain('dist');
    expect(ls.stdout, 'dev dependencies are pruned').not.toContain('has-typescript');
  }, 13 * 60_000);

  it('prints the package version', async () => {
    expect(built, 'the image must have been built').toBe(true);
    const r = await docker(['run', '--rm', '--network', 'none', WORKER_IMAGE, 'node', 'bin/harness.js', '--version']);
    expect(r.code, show(r, 'harness --version')).toBe(0);
    expect(r.stdout).toBe(`${VERSION}\n`);
  }, 60_000);

  it('runs `harness worker --help`, and by default runs the worker', async () => {
    expect(built, 'the image must have been built').toBe(true);
    const r = await docker(['run', '--rm', '--network', 'none', WORKER_IMAGE, 'node', 'bin/harness.js', 'worker', '--help']);
    expect(r.code, show(r, 'harness worker --help')).toBe(0);
    expect(r.stdout).toMatch(/^Usage: harness worker/m);
    const cmd = await docker(['image', 'inspect', '--format', '{{json .Config.Cmd}}', WORKER_IMAGE]);
    expect(JSON.parse(cmd.stdout.trim())).toEqual(['node', 'bin/harness.js', 'worker']);
  }, 60_000);

  it('runs as uid 1000 with the socket group, HARNESS_HOME under the same-path data folder, and skills the engine finds on the host', async () => {
    expect(built, 'the image must have been built').toBe(true);
    const socketGid = statSync(SOCKET).gid;
    const r = await docker([
      'run', '--rm', '--network', 'none', '--hostname', 'host-a',
      '-v', `${SOCKET}:${SOCKET}`, '-v', `${data}:${data}`, '-e', `HARNESS_DATA=${data}`,
      WORKER_IMAGE, 'sh', '-c',
      'echo "uid=$(id -u) groups=$(id -G)"; echo "home=$HARNESS_HOME host=$HARNESS_HOST_ID"; echo "skill=$(readlink -f /app/skills/word_count)"; node bin/harness.js sandbox doctor',
    ]);
    expect(r.code, show(r, 'entrypoint + sandbox doctor')).toBe(0);
    const home = path.join(data, 'hosts', 'host-a');
    expect(r.stdout).toContain(`uid=1000 groups=1000 ${socketGid}`);
    expect(r.stdout).toContain(`home=${home} host=host-a`);
    const skill = /^skill=(.*)$/m.exec(r.stdout)?.[1] ?? '';
    expect(skill.startsWith(path.join(home, 'shipped-skills') + path.sep), skill).toBe(true);
    // The path the worker will hand the engine exists on the host, with the skill in it.
    expect(existsSync(path.join(skill, 'SKILL.md')), `${skill}/SKILL.md on the host`).toBe(true);
    expect(statSync(home).uid).toBe(1000);
    // Non-root, through the socket's group: the worker reaches the engine and the sandbox image.
    expect(r.stdout + r.stderr).toMatch(/^sandbox ready: Docker answers and image .* is present$/m);
  }, 60_000);
  it('as a worker, completes a turn whose run_shell runs in a sandbox on the host engine, with the workspace in the same-path data folder', async () => {
    expect(built, 'the image must have been built').toBe(true);
    const hostId = `deploy-${RUN_ID}`;
    const queue = `deploy-${RUN_ID}`;
    const name = `harness-test-worker-${RUN_ID}`;
    containers.push(name);
    const address = inject('temporalAddress');
    const start = await docker([
      'run', '-d', '--name', name, '--init', '--network', 'host',
      '-v', `${SOCKET}:${SOCKET}`, '-v', `${data}:${data}`,
      '-e', `HARNESS_DATA=${data}`, '-e', `HARNESS_HOST_ID=${hostId}`, '-e', `TEMPORAL_ADDRESS=${address}`,
      '-e', `HARNESS_TASK_QUEUE=${queue}`, '-e', `DATABASE_URL=${TEST_DATABASE_URL}`,
      WORKER_IMAGE,
    ]);
    expect(start.code, show(start, 'docker run (worker)')).toBe(0);
    let logs: Result = { code: null, stdout: '', stderr: '' };
    for (let i = 0; i < 120; i++) {
      logs = await docker(['logs', name]);
      if (/^worker ready: /m.test(logs.stdout + logs.stderr)) break;
      const state = (await docker(['inspect', '--format', '{{.State.Running}}', name])).stdout.trim();
      if (state !== 'true') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(logs.stdout + logs.stderr, 'the worker in the image should start polling').toMatch(/^worker ready: .*home=.*\/hosts\/deploy-/m);

    const home = tempDir('harness-deploy-cli-');
    adoptHome(home); // the test's own folder, where it also writes its script
    const script = writeScript(home, {
      steps: [
        { tool_calls: [{ name: 'run_shell', arguments: { command: 'echo from-the-sandbox > out.txt; echo HARNESS_SANDBOX_UID=$(id -u); ls /skills' } }] },
        { expect: { last_message_contains: 'HARNESS_SANDBOX_UID=1000' }, content: 'The sandbox ran it. HARNESS_OK' },
      ],
    });
    const env = cliEnv({ TEMPORAL_ADDRESS: address, HARNESS_TASK_QUEUE: queue, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL });
    const started = Date.now();
    // Under the default policy: the command asks, `run` leaves it pending (exit 3), and an approval
    // from another process runs it in the image's worker.
    const asked = await runCli(['run', '--model', `scripted:${script}`, 'Run the command in the sandbox', '--json'], { env, cwd: home, timeoutMs: 120_000 });
    expect(asked.code, describeResult(asked)).toBe(3);
    const pending = JSON.parse(asked.stdout) as { session_id: string; status: string };
    expect(pending.status).toBe('waiting_for_approval');
    const r = await runCli(['approve', pending.session_id, '--json'], { env, cwd: home, timeoutMs: 120_000 });
    const logsAfter = await docker(['logs', name]);
    expect(r.code, `${describeResult(r)}\n--- worker logs\n${(logsAfter.stdout + logsAfter.stderr).slice(-3000)}`).toBe(0);
    figure('deploy-compose', `a turn with run_shell through the image's worker: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const out = JSON.parse(r.stdout) as { session_id: string; answer: string; terminated_by: string };
    expect(out.terminated_by).toBe('final_answer');
    expect(out.answer).toBe('The sandbox ran it. HARNESS_OK');
    const sessionId = out.session_id;
    containers.push(`harness-${sessionId}`);

    // The file the sandbox wrote is in the worker's workspace folder, on the host, at the path the worker used.
    const written = path.join(data, 'hosts', hostId, 'workspaces', sessionId, 'out.txt');
    expect(existsSync(written), written).toBe(true);
    expect(readFileSync(written, 'utf8')).toBe('from-the-sandbox\n');
    // The engine mounted the shipped skills from their copy in the data folder.
    const mounts = await docker(['inspect', '--format', '{{range .Mounts}}{{.Source}}|{{.Destination}}\n{{end}}', `harness-${sessionId}`]);
    expect(mounts.code, show(mounts, 'inspect the session container')).toBe(0);
    const skillMount = mounts.stdout.split('\n').find((l) => l.endsWith('|/skills/word_count'));
    expect(skillMount?.startsWith(path.join(data, 'hosts', hostId, 'shipped-skills')), mounts.stdout).toBe(true);

    // On the host, with the same DATABASE_URL: the payloads the worker stored.
    const trace = await runCli(['trace', sessionId, '--full'], { env, cwd: home, timeoutMs: 60_000 });
    expect(trace.code, describeResult(trace)).toBe(0);
    expect(trace.stdout).toContain('HARNESS_SANDBOX_UID=1000');
    expect(trace.stdout).toContain('word_count');
    expect(stackLines(trace.stderr)).toEqual([]);

    const end = await runCli(['end', sessionId, '--purge'], { env, cwd: home, timeoutMs: 60_000 });
    expect(end.code, describeResult(end)).toBe(0);
    // SIGTERM through tini and the entrypoint reaches the worker, which drains and exits 0.
    const stop = await docker(['stop', '--time', '30', name], 60_000);
    expect(stop.code, show(stop, 'docker stop')).toBe(0);
    const exit = (await docker(['inspect', '--format', '{{.State.ExitCode}}', name])).stdout.trim();
    expect(exit, (await docker(['logs', name])).stderr.slice(-2000)).toBe('0');
  }, 240_000);
});
