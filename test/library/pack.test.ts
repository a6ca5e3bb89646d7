/**
 * The package as a user gets it. `npm pack` runs in a copy of the sources (its prepack builds
 * there, so this run's dist/ is never rewritten under the other test files), and the tarball is
 * installed with zod 4 and TypeScript into a new app outside the repository. There: the public
 * API typechecks under moduleResolution node16 (CommonJS and ESM files) and bundler; plain ESM
 * and CommonJS scripts import it by name and reach the test's Temporal server; the library
 * examples, copied in with their imports naming the package, compile and run for real (a worker
 * from the installed package, on its embedded database, and its client); the worker's files
 * (workflow bundle, migrations, skills, sandbox build files) are found inside the package
 * whatever the working folder; and a zod 3 schema gets a one-line error saying zod 4 is needed.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cliEnv, removeTempDirs, ROOT, stopChild, tempDir } from '../support/cli';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';

const NAME = 'durable-agent-harness';
// npm install fetches a few hundred packages (from the cache when it has them): minutes, not seconds.
const SLOW = 30 * 60_000;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

const describeRan = (what: string, r: Ran) => `${what}: exit ${r.code}\n--- stdout\n${r.stdout.slice(-8000)}\n--- stderr\n${r.stderr.slice(-8000)}`;

/** The environment of every command here: no harness settings of the developer's, and none of the npm run this test may be inside of. */
function baseEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = cliEnv(extra);
  for (const k of Object.keys(env)) if (/^npm_/i.test(k) || k === 'INIT_CWD') delete env[k];
  return env;
}

/** Runs a command to its end; with `timeoutMs`, one that hangs is killed (SIGTERM) so the test fails with its output instead of waiting out the test's timeout. */
function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd: opts.cwd, env: opts.env ?? baseEnv(), maxBuffer: 64 * 1024 * 1024, ...(opts.timeoutMs ? { timeout: opts.timeoutMs } : {}) }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) + (err && code === 1 && !stderr ? err.message : '') });
    });
  });
}

async function ok(what: string, r: Promise<Ran>): Promise<Ran> {
  const done = await r;
  expect(done.code, describeRan(what, done)).toBe(0);
  return done;
}

let app = '';
let pkgDir = '';
/** An empty folder the scripts run in: nothing may depend on the working folder. */
let elsewhere = '';
let worker: ChildProcess | undefined;
let model: ScriptedModelServer | undefined;

beforeAll(async () => {
  // The sources as the repository has them (tracked and new files, not what .gitignore leaves
  // out), without the tests, which the build does not compile; node_modules is the repository's.
  const src = tempDir('harness-pack-src-');
  const listed = await ok('git ls-files', run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT }));
  for (const file of listed.stdout.split('\0')) {
    if (!file || file.startsWith('test/') || !existsSync(path.join(ROOT, file))) continue;
    mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(src, file));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(src, 'node_modules'), 'dir');
  const out = tempDir('harness-pack-out-');
  await ok('npm pack', run('npm', ['pack', '--pack-destination', out], { cwd: src }));
  const tarballs = readdirSync(out).filter((f) => f.endsWith('.tgz'));
  expect(tarballs).toHaveLength(1);

  app = realpathSync(tempDir('harness-pack-app-'));
  elsewhere = realpathSync(tempDir('harness-pack-cwd-'));
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'harness-pack-app', version: '1.0.0', private: true }, null, 2));
  // zod 3 under another name: what a tool built with the wrong zod passes to defineTool. The
  // repo's own TypeScript major, so a new major elsewhere cannot turn this test red.
  const typescript = `typescript@^${(JSON.parse(readFileSync(path.join(ROOT, 'node_modules', 'typescript', 'package.json'), 'utf8')) as { version: string }).version}`;
  await ok(
    'npm install',
    run('npm', ['install', path.join(out, tarballs[0]!), 'zod@4', typescript, '@types/node@20', 'zod3@npm:zod@3', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: app }),
  );
  pkgDir = path.join(app, 'node_modules', NAME);
}, SLOW);

afterAll(async () => {
  await stopChild(worker);
  await model?.close();
  removeTempDirs();
});

describe('the packed library, installed into a new app', () => {
  it('holds what the runtime reads and nothing of the tests, benchmarks or sources', () => {
    const files: string[] = [];
    const walk = (rel: string) => {
      for (const e of readdirSync(path.join(pkgDir, rel), { withFileTypes: true })) {
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(r);
        else files.push(r);
      }
    };
    walk('');
    for (const needed of [
      'package.json',
      'bin/harness.js',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/cli/main.js',
      'dist/cli/bundle/main.js',
      'dist/client/lean-proto/eager.js',
      'dist/workflow-bundle.js',
      'migrations/001_memories.sql',
      'skills/word_count/SKILL.md',
      'sandbox/build-rootfs.sh',
      'sandbox/Dockerfile',
      'console/assets/index.html',
    ]) {
      expect(files, needed).toContain(needed);
    }
    expect(files.filter((f) => /^(test|dist\/(test|bench|fuzz|scripts|examples))\//.test(f) || f.endsWith('.map') || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual([]);

    // Every relative require in the shipped code finds its file in the package.
    const missing: string[] = [];
    for (const f of files.filter((x) => x.startsWith('dist/') && x.endsWith('.js') && x !== 'dist/workflow-bundle.js')) {
      for (const m of readFileSync(path.join(pkgDir, f), 'utf8').matchAll(/require\("(\.{1,2}\/[^"]*)"\)/g)) {
        const target = path.resolve(path.dirname(path.join(pkgDir, f)), m[1]!);
        if (![target, `${target}.js`, `${target}.json`, path.join(target, 'index.js')].some((t) => existsSync(t) && !t.endsWith('/'))) missing.push(`${f} → ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);

    const manifest = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { private?: boolean; dependencies: Record<string, string>; peerDependencies: Record<string, string> };
    expect(manifest.private).toBeUndefined();
    expect(manifest.dependencies.zod).toBeUndefined();
    expect(manifest.peerDependencies.zod).toMatch(/^\^4\./);
  });

  it('typechecks with moduleResolution node16 (CommonJS and ESM files) and bundler', async () => {
    const use = `
import { z } from 'zod';
import { connectHarness, createHarnessWorker, defineTool, harnessHome, HarnessClient, ToolDefinitionError, ToolError, UserError, type RunOutcome, type SessionView, type Trace } from '${NAME}';

export const lookup = defineTool({
  name: 'lookup',
  description: 'Looks up a thing by its id.',
  schema: z.object({ id: z.string() }),
  risk: 'read_only',
  run: async ({ id }, ctx) => {
    if (!id) throw new ToolError('no id', { recoverable: false });
    ctx.log.info('looking', { id });
    return { id, where: ctx.workspace };
  },
});

// The types are real: a risk that does not exist is an error (were they any, this line would be the error).
// @ts-expect-error
defineTool({ name: 'x', description: 'does one thing well', schema: z.object({}), risk: 'bogus', run: () => 1 });

export async function main(): Promise<void> {
  const worker = await createHarnessWorker({ tools: [lookup], taskQueue: 'q', secrets: { lookup: { TOKEN: 't' } } });
  void worker.run();
  const client: HarnessClient = await connectHarness({ taskQueue: 'q' });
  const out: RunOutcome = await client.run('hello', { model: 'gpt-4o-mini', requireTools: ['lookup'] });
  if (out.kind === 'done') console.log(out.result.answer);
  const view: SessionView = await client.status(out.sessionId);
  const trace: Trace = await client.trace(out.sessionId);
  console.log(view, trace, harnessHome(), new UserError('x') instanceof Error, ToolDefinitionError.name);
  worker.shutdown();
  await client.close();
}
`;
    writeFileSync(path.join(app, 'use.ts'), use);
    writeFileSync(path.join(app, 'use-esm.mts'), use);
    const configs = {
      node16: { module: 'node16', moduleResolution: 'node16' },
      bundler: { module: 'esnext', moduleResolution: 'bundler' },
    };
    for (const [name, resolution] of Object.entries(configs)) {
      // Declarations checked too (skipLibCheck off), so a broken .d.ts of ours shows; the
      // dependencies' own declaration problems are theirs and are left out below.
      const config = { compilerOptions: { ...resolution, target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['use.ts', 'use-esm.mts'] };
      writeFileSync(path.join(app, `tsconfig.${name}.json`), JSON.stringify(config, null, 2));
      const r = await run(process.execPath, [path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${name}.json`], { cwd: app });
      // Any error but one inside another package's declarations: ours, the file's, or the configuration's.
      const ours = r.stdout.split('\n').filter((l) => /error TS\d+/.test(l) && (!l.startsWith('node_modules/') || l.startsWith(`node_modules/${NAME}/`)));
      expect(ours, describeRan(`tsc ${name}`, r)).toEqual([]);
    }
  }, SLOW);

  it('is imported by name from plain ESM and CommonJS, and reaches a Temporal server', async () => {
    const body = (importLine: string) => `${importLine}
const tool = defineTool({ name: 'lookup', description: 'Looks up a thing by its id.', schema: z.object({ id: z.string() }), risk: 'read_only', run: ({ id }) => ({ id }) });
let refused;
try {
  defineTool({ name: 'mcp__x', description: 'Looks up a thing by its id.', schema: z.object({}), risk: 'read_only', run: () => 1 });
} catch (err) {
  refused = err instanceof ToolDefinitionError;
}
const client = await connectHarness({ env: { TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS }, taskQueue: 'pack-test' });
let unknown;
try {
  await client.status('no-such-session-' + Date.now());
} catch (err) {
  unknown = err instanceof UserError ? 'UserError' : String(err);
}
await client.close();
console.log(JSON.stringify({ name: tool.name, risk: tool.risk, parameters: tool.spec.parameters, refused, client: client instanceof HarnessClient, unknown, home: harnessHome({ HARNESS_HOME: '/somewhere/home' }), toolError: new ToolError('x') instanceof Error }));
`;
    writeFileSync(path.join(app, 'esm.mjs'), body(`import { z } from 'zod';\nimport { connectHarness, defineTool, harnessHome, HarnessClient, ToolDefinitionError, ToolError, UserError } from '${NAME}';`));
    writeFileSync(
      path.join(app, 'cjs.cjs'),
      `const { z } = require('zod');\nconst { connectHarness, defineTool, harnessHome, HarnessClient, ToolDefinitionError, ToolError, UserError } = require('${NAME}');\n(async () => {\n${body('')}\n})().catch((err) => { console.error(err); process.exit(1); });\n`,
    );
    const env = baseEnv({ TEMPORAL_ADDRESS: inject('temporalAddress') });
    for (const script of ['esm.mjs', 'cjs.cjs']) {
      const r = await ok(`node ${script}`, run(process.execPath, [path.join(app, script)], { cwd: elsewhere, env }));
      const line = r.stdout.trim().split('\n').at(-1)!;
      expect(JSON.parse(line), script).toEqual({
        name: 'lookup',
        risk: 'read_only',
        parameters: expect.objectContaining({ type: 'object', properties: { id: { type: 'string' } } }),
        refused: true,
        client: true,
        unknown: 'UserError',
        home: '/somewhere/home',
        toolError: true,
      });
    }
  }, SLOW);

  it('finds its workflow bundle, migrations, skills and sandbox build files in the package, whatever the working folder', async () => {
    const probe = `
const path = require('node:path');
const { existsSync } = require('node:fs');
const dist = path.join(require.resolve('${NAME}/package.json'), '..', 'dist');
const { projectRoot, workflowBundlePath } = require(path.join(dist, 'machine', 'paths.js'));
const { migrationsDir } = require(path.join(dist, 'activities', 'memory', 'migrate.js'));
const { defaultSkills } = require(path.join(dist, 'activities', 'worker-defaults.js'));
const root = projectRoot();
console.log(JSON.stringify({
  root,
  bundle: workflowBundlePath(),
  bundleThere: existsSync(workflowBundlePath()),
  migrations: migrationsDir(),
  skills: defaultSkills({}).catalog().skills.map((s) => [s.name, s.folder]),
  sandbox: ['sandbox/build-rootfs.sh', 'sandbox/Dockerfile', 'bin/harness.js'].filter((f) => existsSync(path.join(root, f))),
}));
`;
    writeFileSync(path.join(app, 'probe.cjs'), probe);
    const r = await ok('node probe.cjs', run(process.execPath, [path.join(app, 'probe.cjs')], { cwd: elsewhere }));
    const found = JSON.parse(r.stdout.trim()) as { root: string; bundle: string; bundleThere: boolean; migrations: string; skills: [string, string][]; sandbox: string[] };
    expect(found.root).toBe(pkgDir);
    expect(found.bundle).toBe(path.join(pkgDir, 'dist', 'workflow-bundle.js'));
    expect(found.bundleThere).toBe(true);
    expect(found.migrations).toBe(path.join(pkgDir, 'migrations'));
    expect(found.skills).toContainEqual(['word_count', path.join(pkgDir, 'skills', 'word_count')]);
    expect(found.sandbox).toEqual(['sandbox/build-rootfs.sh', 'sandbox/Dockerfile', 'bin/harness.js']);

    // The installed `harness` command: its version from the package, its skills from the package.
    const bin = path.join(app, 'node_modules', '.bin', 'harness');
    const version = await ok('harness --version', run(bin, ['--version'], { cwd: elsewhere }));
    expect(version.stdout.trim()).toBe((JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as { version: string }).version);
    const skills = await ok('harness skills --json', run(bin, ['skills', '--json'], { cwd: elsewhere }));
    expect((JSON.parse(skills.stdout) as { skills: { name: string; folder: string }[] }).skills).toContainEqual(expect.objectContaining({ name: 'word_count', folder: path.join(pkgDir, 'skills', 'word_count') }));
  }, SLOW);

  it('runs the library examples, copied into the app with imports naming the package', async () => {
    // Every example folder, laid out as in the repository (examples/<name>/ beside dist/examples/<name>/,
    // which the examples' own paths rely on). An import of the repository's own modules would not
    // work for a user: the only ones allowed are the package, zod, Node's, and the example's own files.
    const examples = readdirSync(path.join(ROOT, 'examples'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(examples).toContain('custom-tool');
    for (const name of examples) {
      const to = path.join(app, 'examples', name);
      cpSync(path.join(ROOT, 'examples', name), to, { recursive: true });
      for (const file of readdirSync(to).filter((f) => /\.m?ts$/.test(f))) {
        const text = readFileSync(path.join(to, file), 'utf8').replace(/from '(?:\.\.\/)+index'/g, `from '${NAME}'`);
        const foreign = [...text.matchAll(/from '([^']+)'/g)].map((m) => m[1]!).filter((s) => !(s === NAME || s === 'zod' || s.startsWith('node:') || /^\.\/[^/]+$/.test(s)));
        expect(foreign, `${name}/${file} imports what a user of the package does not have`).toEqual([]);
        writeFileSync(path.join(to, file), text);
      }
    }
    const config = { compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'ES2022', strict: true, skipLibCheck: true, types: ['node'], rootDir: '.', outDir: 'dist' }, include: ['examples'] };
    writeFileSync(path.join(app, 'tsconfig.examples.json'), JSON.stringify(config, null, 2));
    await ok('tsc examples', run(process.execPath, [path.join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.examples.json'], { cwd: app }));

    // custom-tool for real: its worker on the test's Temporal server with the embedded database
    // (the package's migrations), its client approving the refund, `harness trace` from the app.
    const home = tempDir('harness-pack-home-');
    const env = baseEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `pack-example-${randomUUID()}`, HARNESS_HOME: home, XDG_STATE_HOME: tempDir('harness-pack-state-') });
    const built = path.join(app, 'dist', 'examples', 'custom-tool');
    const w = spawn(process.execPath, [path.join(built, 'worker.js')], { cwd: elsewhere, env, stdio: ['ignore', 'pipe', 'pipe'] });
    worker = w;
    let log = '';
    w.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    w.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<number | null>((resolve) => w.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (log.includes('worker ready')) {
          clearInterval(timer);
          resolve();
        }
      }, 100);
      void exited.then((code) => {
        clearInterval(timer);
        reject(new Error(`the example worker exited (${code}):\n${log}`));
      });
    });
    expect(log).toContain('embedded PGlite');

    const client = await run(process.execPath, [path.join(built, 'client.js'), '--yes'], { cwd: elsewhere, env });
    expect(client.code, describeRan('client.js --yes', client) + `\n--- worker\n${log}`).toBe(0);
    expect(client.stdout).toContain('Order A-1001 (a teapot) is refunded: 39 EUR, refund R-A-1001.');
    const sessionId = /^session (\S+)$/m.exec(client.stdout)![1]!;
    // The example's worker keeps a home of its own beside the harness home in effect (HARNESS_HOME's).
    expect(readFileSync(path.join(`${home}-custom-tool-example`, 'workspaces', sessionId, 'refunds.log'), 'utf8')).toBe('A-1001\t39 EUR\tarrived broken\n');

    const trace = await ok('harness trace', run(path.join(app, 'node_modules', '.bin', 'harness'), ['trace', sessionId, '--json'], { cwd: elsewhere, env }));
    const calls = trace.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; name: string; source?: string }).filter((s) => s.type === 'tool_call');
    expect(calls.map((s) => [s.name, s.source])).toEqual([
      ['lookup_order', 'custom'],
      ['refund_order', 'custom'],
    ]);
    // A client command: it runs from the package's CLI bundle, with the package's halves of the Temporal API.
    const status = await ok('harness status', run(path.join(app, 'node_modules', '.bin', 'harness'), ['status', sessionId, '--json'], { cwd: elsewhere, env }));
    expect(JSON.parse(status.stdout)).toMatchObject({ session_id: sessionId });

    w.kill('SIGTERM');
    expect(await exited, log).toBe(0);
    worker = undefined;
  }, SLOW);

  it("runs the README's quick start (examples/quick-start/index.mts) as an ES module, its model an OpenAI-compatible endpoint", async () => {
    // The model: the harness's scripted model at OPENAI_BASE_URL, as a user's endpoint would be.
    // It asks for refund_order, which the default policy sends to a person (the example approves
    // it), then answers. A dummy OPENAI_API_KEY: the worker sends it only to its own endpoint.
    const answer = 'Order A-1001 is refunded: refund R-A-1001.';
    model = await startScriptedModel({
      script: { steps: [{ tool_calls: [{ name: 'refund_order', arguments: { order_id: 'A-1001' } }] }, { content: answer }] },
    });
    // The example's worker keeps its home at `${harnessHome()}-shop`: beside HARNESS_HOME, so both inside this folder.
    const parent = tempDir('harness-pack-quick-');
    const env = baseEnv({
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      HARNESS_HOME: path.join(parent, 'home'),
      XDG_STATE_HOME: path.join(parent, 'state'),
      OPENAI_BASE_URL: model.url,
      OPENAI_API_KEY: 'sk-quick-start-test',
    });
    const script = path.join(app, 'dist', 'examples', 'quick-start', 'index.mjs');
    expect(existsSync(script), 'tsc compiled index.mts to index.mjs').toBe(true);
    const r = await run(process.execPath, [script], { cwd: elsewhere, env, timeoutMs: 5 * 60_000 });
    expect(r.code, describeRan('node quick-start/index.mjs', r)).toBe(0);
    expect(r.stdout.split('\n'), describeRan('node quick-start/index.mjs', r)).toContain(answer);

    // Both model calls went to the endpoint, with the worker's key; the second saw the tool's result.
    const chats = model.requests.filter((q) => q.purpose === 'turn');
    expect(chats.map((q) => q.status)).toEqual([200, 200]);
    expect(JSON.stringify(chats[1]!.body)).toContain('R-A-1001');
    const sessionId = chats[0]!.session;

    // The turn's trace, from the installed command reading the worker's home: refund_order ran
    // once, after a person approved it.
    const trace = await ok(
      'harness trace',
      run(path.join(app, 'node_modules', '.bin', 'harness'), ['trace', sessionId, '--json'], { cwd: elsewhere, env: { ...env, HARNESS_HOME: path.join(parent, 'home-shop') } }),
    );
    const spans = trace.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; name: string; status: string; source?: string; output?: { approval?: { approved?: boolean } } | null });
    const calls = spans.filter((s) => s.type === 'tool_call');
    expect(calls.map((s) => [s.name, s.source, s.status, s.output?.approval?.approved])).toEqual([['refund_order', 'custom', 'ok', true]]);
    expect(spans.filter((s) => s.type === 'approval').map((s) => [s.name, s.status])).toEqual([['approval refund_order', 'ok']]);
  }, SLOW);

  it('refuses a zod 3 schema in one line that says zod 4 is needed', async () => {
    writeFileSync(
      path.join(app, 'zod3.cjs'),
      `const { z } = require('zod3');
const { defineTool, ToolDefinitionError } = require('${NAME}');
try {
  defineTool({ name: 'lookup', description: 'Looks up a thing by its id.', schema: z.object({ id: z.string() }), risk: 'read_only', run: () => 1 });
  console.log('accepted');
} catch (err) {
  console.log(JSON.stringify({ definitionError: err instanceof ToolDefinitionError, message: err.message }));
}
`,
    );
    const r = await ok('node zod3.cjs', run(process.execPath, [path.join(app, 'zod3.cjs')], { cwd: elsewhere }));
    const { definitionError, message } = JSON.parse(r.stdout.trim()) as { definitionError: boolean; message: string };
    expect(definitionError).toBe(true);
    expect(message).not.toContain('\n');
    expect(message).toMatch(/zod 3 schema.*needs zod 4/);
  }, SLOW);
});
