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
  /** Connecting and listing tools: after this long the server counts as unavailable (default 10 s). */
  startupTimeoutSec: seconds.optional(),
  /** One tool call (default 60 s; time waiting for a human answer not counted). */
  callTimeoutSec: seconds.optional(),
  risk: risk.optional(),
  decision: decision.optional(),
  tools: z.record(z.string().min(1), z.strictObject({ risk: risk.optional(), decision: decision.optional(), timeoutSec: seconds.optional() })).optional(),
  /** `false` keeps the entry but does not start it. */
  enabled: z.boolean().optional(),
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
      startupTimeoutMs: (e.startupTimeoutSec ?? DEFAULT_STARTUP_MS / 1000) * 1000,
      callTimeoutMs: (e.callTimeoutSec ?? DEFAULT_CALL_MS / 1000) * 1000,
      ...(e.risk ? { risk: e.risk } : {}),
      ...(e.decision ? { decision: e.decision } : {}),
      ...(tools ? { tools } : {}),
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
