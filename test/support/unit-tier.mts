/**
 * Which test files form the unit tier (`npm run test:unit`, vitest.unit.config.mts): those whose
 * code cannot reach a real component. A file qualifies when nothing it loads (the test, the
 * support helpers and source modules it imports, and theirs in turn) imports a client of a real
 * component (Temporal, Docker, Postgres, MCP servers, a browser, an OTLP collector), a Node
 * module for processes, sockets or threads, vitest's `inject` (values from the full suite's global
 * setup), or built code under dist/. The rule reads imports, so a test moves between tiers by
 * what it imports, never by a list someone has to keep; `npm test` runs every file either way.
 *
 * Imports are read from the code vitest runs: TypeScript is transpiled first, so imports used only
 * as types (which leave no code behind) do not count. An import the walk cannot follow (a
 * computed `import()`, a relative path that resolves to nothing, a file that does not parse)
 * leaves the file out, since nothing can be said about what it loads.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseSync, transformWithOxc } from 'vite';

/** Packages that talk to a real component when used. */
const COMPONENT_PACKAGES = [
  '@temporalio/client',
  '@temporalio/worker',
  '@temporalio/testing',
  'dockerode',
  'pg',
  '@electric-sql/pglite',
  '@electric-sql/pglite-socket',
  '@modelcontextprotocol/sdk',
  'playwright-core',
  '@opentelemetry/exporter-trace-otlp-proto',
];

/** Node modules for processes, sockets and threads (a spawned CLI, a server, a worker). */
const NODE_IO = ['child_process', 'net', 'http', 'https', 'http2', 'tls', 'dgram', 'worker_threads', 'cluster'];

/** Why a file is not in the unit tier: what it reaches and the import chain that reaches it. */
export interface Exclusion {
  reason: string;
  /** Repository-relative paths from the test file to the module that imports `reason`. */
  chain: string[];
}

interface Imports {
  specifiers: string[];
  /** Something the walk cannot follow: a computed import() or require(). */
  opaque?: string;
  injects: boolean;
}

/** The unit tier of a repository: its test files that reach no real component, sorted. */
export async function unitTestFiles(root: string): Promise<string[]> {
  const verdicts = await classifyTests(root);
  return [...verdicts].filter(([, why]) => !why).map(([file]) => file);
}

/** Every test file under test/ (repository-relative, sorted) with why it is left out of the unit tier, or null. */
export async function classifyTests(root: string): Promise<Map<string, Exclusion | null>> {
  const walker = new Walker(root);
  const out = new Map<string, Exclusion | null>();
  for (const file of testFiles(root)) out.set(file, await walker.exclusion(file));
  return out;
}

function testFiles(root: string): string[] {
  const found: string[] = [];
  const visit = (dir: string) => {
    for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, e.name);
      if (e.isDirectory()) visit(rel);
      else if (e.name.endsWith('.test.ts')) found.push(rel);
    }
  };
  visit('test');
  return found.sort();
}

class Walker {
  /** What each module reaches, once found: shared by every test that imports it. */
  private readonly reached = new Map<string, Exclusion | null>();
  private readonly imports = new Map<string, Promise<Imports>>();

  constructor(private readonly root: string) {}

  async exclusion(file: string): Promise<Exclusion | null> {
    return this.visit(file, new Set());
  }

  /** Depth-first; a module already on the path (an import cycle) adds nothing new. */
  private async visit(file: string, onPath: Set<string>): Promise<Exclusion | null> {
    const known = this.reached.get(file);
    if (known !== undefined) return known;
    if (onPath.has(file)) return null;
    onPath.add(file);
    const found = await this.search(file, onPath);
    onPath.delete(file);
    const result = found && { reason: found.reason, chain: [file, ...found.chain] };
    // A clean result found while a cycle was open may depend on a module still being walked:
    // only exclusions (always final) and results outside any cycle are kept.
    if (result || onPath.size === 0) this.reached.set(file, result);
    return result;
  }

  private async search(file: string, onPath: Set<string>): Promise<Exclusion | null> {
    if (file.startsWith('dist/')) return { reason: 'built code in dist/ (needs `npm run build`)', chain: [] };
    const imp = await this.readImports(file);
    if (imp.opaque) return { reason: imp.opaque, chain: [] };
    if (imp.injects) return { reason: "vitest's inject (the full suite's global setup)", chain: [] };
    const targets = new Map(imp.specifiers.filter((s) => s.startsWith('.')).map((s) => [s, resolveRelative(this.root, file, s)]));
    // Read what this module imports all at once (transforms run in parallel); walk them in order.
    for (const t of targets.values()) if (t && !t.endsWith('.json')) void this.readImports(t);
    for (const spec of imp.specifiers) {
      if (path.isAbsolute(spec)) return { reason: `an import the walk cannot follow: ${spec}`, chain: [] };
      if (spec.startsWith('.')) {
        const target = targets.get(spec);
        if (!target) return { reason: `an import that resolves to no file: ${spec}`, chain: [] };
        if (target.endsWith('.json')) continue;
        const below = await this.visit(target, onPath);
        if (below) return below;
        continue;
      }
      const component = componentOf(spec);
      if (component) return { reason: component, chain: [] };
    }
    return null;
  }

  private readImports(file: string): Promise<Imports> {
    let p = this.imports.get(file);
    if (!p) {
      // A file that does not parse is one the walk cannot vouch for; caught here, a read started
      // ahead and never awaited is no unhandled rejection either.
      p = importsOf(path.join(this.root, file)).catch((err: Error) => ({
        specifiers: [],
        injects: false,
        opaque: `a file that does not parse (${err.message.split('\n')[0]})`,
      }));
      this.imports.set(file, p);
    }
    return p;
  }
}

/** The real component a bare specifier stands for, if any. */
function componentOf(spec: string): string | null {
  const bare = spec.replace(/^node:/, '');
  const pkg = bare.startsWith('@') ? bare.split('/').slice(0, 2).join('/') : bare.split('/')[0];
  if (COMPONENT_PACKAGES.includes(pkg)) return pkg;
  if (NODE_IO.includes(pkg)) return `node:${pkg}`;
  if (pkg === 'durable-agent-harness') return 'the built package (dist/, needs `npm run build`)';
  return null;
}

/** A relative import as TypeScript and Node resolve it here: .ts first, then the file as named, then index.ts. */
function resolveRelative(root: string, from: string, spec: string): string | null {
  const base = path.posix.join(path.posix.dirname(from), spec);
  const candidates = [`${base}.ts`, base.replace(/\.js$/, '.ts'), base, `${base}.js`, `${base}.cjs`, `${base}/index.ts`, `${base}/index.js`];
  for (const c of candidates) {
    const abs = path.join(root, c);
    if (existsSync(abs) && statSync(abs).isFile()) return c;
  }
  return null;
}

/** The imports a module makes at run time: static, re-exports, import() and require() of literal names. */
async function importsOf(abs: string): Promise<Imports> {
  const source = readFileSync(abs, 'utf8');
  const typescript = /\.[cm]?ts$/.test(abs);
  const code = typescript ? (await transformWithOxc(source, abs, { lang: 'ts' })).code : source;
  const ast = parseSync(typescript ? abs.replace(/ts$/, 'js') : abs, code, { sourceType: /\.c[jt]s$/.test(abs) ? 'script' : 'module' });
  if (ast.errors.length) throw new Error(ast.errors[0].message);
  const out: Imports = { specifiers: [], injects: false };
  walk(ast.program, (node) => {
    const type = node.type;
    if (type === 'ImportDeclaration') {
      const spec = literal(node.source);
      if (spec) out.specifiers.push(spec);
      if (spec === 'vitest') {
        const names = (node.specifiers as Array<{ imported?: { name?: string } }>).map((s) => s.imported?.name);
        if (names.includes('inject')) out.injects = true;
      }
    } else if ((type === 'ExportNamedDeclaration' || type === 'ExportAllDeclaration') && node.source) {
      const spec = literal(node.source);
      if (spec) out.specifiers.push(spec);
    } else if (type === 'ImportExpression') {
      const spec = literal(node.source);
      if (spec) out.specifiers.push(spec);
      else out.opaque ??= `an import the walk cannot follow: ${code.slice(node.start as number, node.end as number).slice(0, 60)}`;
    } else if (type === 'CallExpression' && (node.callee as Node).type === 'Identifier' && (node.callee as Node).name === 'require') {
      const arg = (node.arguments as Node[])[0];
      const spec = literal(arg);
      if (spec) out.specifiers.push(spec);
      else out.opaque ??= `an import the walk cannot follow: ${code.slice(node.start as number, node.end as number).slice(0, 60)}`;
    }
  });
  return out;
}

type Node = Record<string, unknown> & { type: string };

function literal(node: unknown): string | null {
  const n = node as Node | undefined;
  if (n?.type === 'Literal' && typeof n.value === 'string') return n.value;
  if (n?.type === 'TemplateLiteral' && (n.expressions as unknown[]).length === 0) return (n.quasis as Array<{ value: { cooked: string } }>)[0].value.cooked;
  return null;
}

function walk(node: unknown, visit: (n: Node) => void): void {
  if (Array.isArray(node)) {
    for (const child of node) walk(child, visit);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const n = node as Node;
  if (typeof n.type === 'string') visit(n);
  for (const key in n) {
    if (key !== 'type' && key !== 'start' && key !== 'end') walk(n[key], visit);
  }
}
