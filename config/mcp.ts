/**
 * The `mcpServers` section of harness.config.json, in the shape other harnesses use (stdio:
 * `command`, `args`, `env`, `cwd`; Streamable HTTP: `url`, `headers`), plus the harness's own
 * per-server and per-tool `risk`, `decision` and timeouts. Validated by zod; errors name the
 * server and the field. Resolved into McpServerSpec values that the session config carries.
 */
import path from 'node:path';
import { z } from 'zod';
import { SERVER_NAME, type McpServerSpec, type McpToolSettings } from '../deterministic/mcp';

const risk = z.enum(['read_only', 'write', 'network', 'dangerous']);
const decision = z.enum(['allow', 'ask', 'deny']);
const seconds = z.number().positive().max(24 * 60 * 60);
// `${VAR}` references are kept as written and resolved by the worker.
const values = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/, 'names are letters, digits, - and _'), z.string());

const common = {
  /** Connecting and listing tools: after this long the server counts as unavailable (default 10 s; 120 s for a package runner such as npx). */
  startupTimeoutSec: seconds.optional(),
  /** One tool call (default 60 s; time waiting for a human answer not counted). */
  callTimeoutSec: seconds.optional(),
  risk: risk.optional(),
  decision: decision.optional(),
  tools: z.record(z.string().min(1), z.strictObject({ risk: risk.optional(), decision: decision.optional(), timeoutSec: seconds.optional() })).optional(),
  /** `false` keeps the entry but does not start it. */
  enabled: z.boolean().optional(),
  /** The server holds no per-user state: one process serves an agent's sessions (per tenant), not one per session. */
  shareable: z.boolean().optional(),
};

const stdioServer = z.strictObject({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: values.default({}),
  cwd: z.string().min(1).optional(),
  /** Accepted for compatibility with other harnesses' files. */
  type: z.literal('stdio').optional(),
  ...common,
});

const httpServer = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  headers: values.default({}),
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  ...common,
});

/** The `mcpServers` section: server name → entry (stdio when it has `command`, Streamable HTTP when it has `url`). */
export const mcpServersSchema = z
  .record(z.string(), z.unknown())
  .superRefine((servers, ctx) => {
    for (const [name, entry] of Object.entries(servers)) {
      if (!SERVER_NAME.test(name)) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'server names are letters, digits, - and _ (at most 31, no "__")' });
        continue;
      }
      const schema = entryKind(entry);
      if (!schema) {
        ctx.addIssue({ code: 'custom', path: [name], message: 'give either "command" (stdio) or "url" (Streamable HTTP), not both' });
        continue;
      }
      const parsed = schema.safeParse(entry);
      if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: [name, ...issue.path] } as never);
    }
  });

/**
 * One MCP server as its owner declares it (an entry of harness.config.json's `mcpServers`, an
 * agent's `mcpServers`): stdio with `command`, or Streamable HTTP with `url`.
 */
export type McpServerDeclaration = z.input<typeof stdioServer> | z.input<typeof httpServer>;

function entryKind(entry: unknown): typeof stdioServer | typeof httpServer | undefined {
  if (!entry || typeof entry !== 'object') return undefined;
  const has = (k: string) => k in (entry as object);
  if (has('command') && !has('url')) return stdioServer;
  if (has('url') && !has('command')) return httpServer;
  return undefined;
}

const DEFAULT_STARTUP_MS = 10_000;
// A package runner may download and install the server before it starts: on a cold cache or a
// busy machine `npx` alone takes longer than a started program needs to answer.
const RUNNER_STARTUP_MS = 120_000;
const RUNNERS = new Set(['npx', 'pnpx', 'bunx', 'uvx', 'pipx']);
const RUNNER_VERBS: Record<string, string[]> = { npm: ['exec', 'x'], pnpm: ['dlx', 'exec'], yarn: ['dlx'], uv: ['run', 'tool'], docker: ['run'], podman: ['run'] };

/** The startup timeout a stdio server gets unless it sets its own: longer when a package runner launches it. */
export function defaultStartupMs(command: string | undefined, args: readonly string[] = []): number {
  if (!command) return DEFAULT_STARTUP_MS;
  const bin = path.basename(command).replace(/\.(cmd|exe)$/i, '');
  return RUNNERS.has(bin) || RUNNER_VERBS[bin]?.includes(args[0] ?? '') ? RUNNER_STARTUP_MS : DEFAULT_STARTUP_MS;
}
const DEFAULT_CALL_MS = 60_000;

/** The enabled servers as specs; relative `cwd` (and a `./` command) resolve against the config file's folder. */
export function resolveMcpServers(section: Record<string, unknown> | undefined, baseDir: string): McpServerSpec[] {
  const out: McpServerSpec[] = [];
  for (const [name, entry] of Object.entries(section ?? {})) {
    const schema = entryKind(entry)!;
    const e = schema.parse(entry) as z.output<typeof stdioServer> & z.output<typeof httpServer>;
    if (e.enabled === false) continue;
    const tools = e.tools
      ? Object.fromEntries(
          Object.entries(e.tools).map(([t, s]) => [
            t,
            { ...(s.risk ? { risk: s.risk } : {}), ...(s.decision ? { decision: s.decision } : {}), ...(s.timeoutSec ? { timeoutMs: s.timeoutSec * 1000 } : {}) } satisfies McpToolSettings,
          ]),
        )
      : undefined;
    const shared = {
      name,
      startupTimeoutMs: e.startupTimeoutSec !== undefined ? e.startupTimeoutSec * 1000 : defaultStartupMs(e.command, e.args),
      callTimeoutMs: (e.callTimeoutSec ?? DEFAULT_CALL_MS / 1000) * 1000,
      ...(e.risk ? { risk: e.risk } : {}),
      ...(e.decision ? { decision: e.decision } : {}),
      ...(tools ? { tools } : {}),
      ...(e.shareable ? { shareable: true } : {}),
    };
    if (schema === stdioServer) {
      const command = e.command.startsWith('./') || e.command.startsWith('../') ? path.resolve(baseDir, e.command) : e.command;
      out.push({ ...shared, transport: 'stdio', command, args: e.args, env: e.env, ...(e.cwd ? { cwd: path.resolve(baseDir, e.cwd) } : {}) });
    } else {
      out.push({ ...shared, transport: 'http', url: e.url, headers: e.headers });
    }
  }
  return out;
}
