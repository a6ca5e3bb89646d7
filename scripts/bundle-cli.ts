/**
 * Writes the CLI's bundle (dist/cli/bundle/), which `harness` runs the client commands from
 * (cli/client-commands.ts). Run by `npm run build`, after tsc and scripts/lean-proto.ts.
 *
 * Most of what such a command cost to start was Node finding, reading and compiling some 370
 * modules one by one. The bundle is the CLI (cli/main.ts) with the client commands' actions and
 * the Temporal client in a few files: what a command reaches at once in one, what it imports
 * lazily (the watch code) in files of their own, still loaded only when reached. The other
 * commands' actions stay requires of dist/cli/actions/ (bin/harness.js never runs them from
 * here), and every other package a require of node_modules. Three modules take another's
 * place here:
 *   - `@temporalio/proto` is the lean root of client/lean-proto (eager half, the rest when reached);
 *   - so main.ts's installLeanProto has nothing left to do;
 *   - client/grpc-js.ts is the @grpc/grpc-js bundled for the client (one copy, as outside).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { build, type Plugin } from 'rolldown';
import { CLI_BUNDLE, CLIENT_COMMANDS } from '../cli/client-commands';

const ROOT = path.resolve(__dirname, '..', '..');

/** The packages bundled: what the client and commander depend on, all the way down. */
function bundledPackages(): Set<string> {
  const found = new Set<string>();
  const visit = (name: string, fromDir: string) => {
    if (found.has(name)) return;
    // Where Node would find it from there (a package's exports need not list its package.json).
    let manifest: string | undefined;
    for (let dir = fromDir; !manifest; dir = path.dirname(dir)) {
      const candidate = path.join(dir, 'node_modules', name, 'package.json');
      if (existsSync(candidate)) manifest = candidate;
      else if (path.dirname(dir) === dir) return; // An optional dependency not installed.
    }
    found.add(name);
    const deps = (JSON.parse(readFileSync(manifest, 'utf8')) as { dependencies?: Record<string, string> }).dependencies ?? {};
    for (const dep of Object.keys(deps)) visit(dep, path.dirname(manifest));
  };
  for (const name of ['@temporalio/client', 'commander']) visit(name, ROOT);
  // grpc-js requires it only inside channelz and ORCA, which a client never starts: left to load
  // from node_modules if ever, it keeps its own protobufjs (another major) out of the bundle.
  found.delete('@grpc/proto-loader');
  return found;
}

/** The package a resolved file belongs to (the innermost node_modules), or undefined for the harness's own. */
function packageOf(file: string): string | undefined {
  return /.*node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file.replace(/\\/g, '/'))?.[1];
}

/** The substitutions listed above, each of which must be used (a renamed module must not quietly drop one). */
function substitutions(): Plugin & { unused: () => string[] } {
  const clientRequire = createRequire(require.resolve('@temporalio/client'));
  const protoRequire = createRequire(clientRequire.resolve('@temporalio/proto'));
  const src = (...p: string[]) => JSON.stringify(path.join(ROOT, ...p));
  const modules: Record<string, { matches: (source: string, importer: string) => boolean; code: string }> = {
    '\0harness:lean-proto': {
      matches: (source) => source === '@temporalio/proto',
      code: `const path = require('node:path');
const { leanRoot, LEAN_PROTO_FILES } = require(${src('client', 'lean-proto', 'install.ts')});
const { projectRoot } = require(${src('machine', 'paths.ts')});
// The halves scripts/lean-proto.ts wrote: read at run time, not copied into the bundle.
const dir = path.join(projectRoot(), 'dist', 'client', 'lean-proto');
module.exports = leanRoot(
  require(path.join(dir, LEAN_PROTO_FILES.eager)),
  () => require(path.join(dir, LEAN_PROTO_FILES.rest)).rest,
  require(${JSON.stringify(protoRequire.resolve('protobufjs/light'))}),
  require(${JSON.stringify(protoRequire.resolve('./../lib/patch-protobuf-root'))}).patchProtobufRoot,
);
`,
    },
    '\0harness:no-install': {
      matches: (source, importer) => importer === path.join(ROOT, 'cli', 'main.ts') && source === '../client/lean-proto/install',
      code: `exports.installLeanProto = () => false;\n`,
    },
    '\0harness:grpc-js': {
      matches: (source, importer) => importer.startsWith(path.join(ROOT, 'client') + path.sep) && source === './grpc-js',
      code: `exports.grpcJs = require(${JSON.stringify(clientRequire.resolve('@grpc/grpc-js'))});\n`,
    },
  };
  const used = new Set<string>();
  const clientActions = new Set(CLIENT_COMMANDS.values());
  return {
    name: 'harness-substitutions',
    resolveId(source, importer) {
      if (!importer) return null;
      const action = /^\.\.\/actions\/([\w-]+)$/.exec(source);
      if (action && path.dirname(importer) === path.join(ROOT, 'cli', 'commands') && !clientActions.has(action[1]!)) {
        // Beside the bundle's files in dist/cli/bundle/: tsc's build of the action.
        return { id: `../actions/${action[1]}.js`, external: true };
      }
      for (const [id, m] of Object.entries(modules)) {
        if (m.matches(source, importer)) {
          used.add(id);
          return id;
        }
      }
      return null;
    },
    load(id) {
      return modules[id]?.code ?? null;
    },
    unused: () => Object.keys(modules).filter((id) => !used.has(id)),
  };
}

async function main(): Promise<void> {
  const out = path.resolve(process.argv[2] ?? path.dirname(path.join(ROOT, CLI_BUNDLE)));
  // Chunk names carry a hash of their content: a file of an earlier build must not linger.
  rmSync(out, { recursive: true, force: true });
  const bundled = bundledPackages();
  const subs = substitutions();
  const result = await build({
    input: { main: path.join(ROOT, 'cli', 'main.ts') },
    cwd: ROOT,
    platform: 'node',
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    external: (id, _importer, isResolved) => {
      if (id.startsWith('\0')) return false;
      if (id.startsWith('node:')) return true;
      if (!isResolved) return !(id.startsWith('.') || path.isAbsolute(id)) && !bundled.has(id.replace(/^((?:@[^/]+\/)?[^/]+).*$/, '$1'));
      const pkg = packageOf(id);
      return pkg !== undefined && !bundled.has(pkg);
    },
    plugins: [subs],
    logLevel: 'warn',
    output: { dir: out, format: 'cjs', dynamicImportInCjs: false, comments: { legal: true, annotation: false, jsdoc: false }, entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js', sourcemap: false },
  });
  const unused = subs.unused();
  if (unused.length) throw new Error(`bundle-cli: substitutions not used (was a module renamed?): ${unused.join(', ')}`);
  const ids = result.output.flatMap((o) => (o.type === 'chunk' ? o.moduleIds : []));
  // The whole API's root is what the lean one replaces: in the bundle it would be built at load.
  const whole = ids.filter((id) => /@temporalio\/proto\/protos\//.test(id));
  if (whole.length) throw new Error(`bundle-cli: the bundle holds @temporalio/proto's whole root (${whole.join(', ')})`);
  const bytes = result.output.reduce((n, o) => n + (o.type === 'chunk' ? o.code.length : 0), 0);
  console.error(`CLI bundle written to ${out} (${result.output.length} files, ${(bytes / 1024).toFixed(0)} KiB)`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
