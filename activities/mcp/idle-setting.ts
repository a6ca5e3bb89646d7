/**
 * How long a worker keeps an MCP server process (or HTTP connection) nobody uses: each session has
 * its own, so processes of sessions that went quiet must not pile up, and a session's next call
 * after that starts its server afresh. HARNESS_MCP_IDLE_SEC, default 5 minutes.
 */
export const MCP_IDLE_VARIABLE = 'HARNESS_MCP_IDLE_SEC';
const DEFAULT_MS = 5 * 60_000;
const MAX_SEC = 7 * 24 * 3_600;

/** The idle time from the environment; a bad value is a problem naming the variable (and keeps the default). */
export function mcpIdleSetting(env: NodeJS.ProcessEnv): { idleMs: number; problem?: string } {
  const v = env[MCP_IDLE_VARIABLE]?.trim();
  if (!v) return { idleMs: DEFAULT_MS };
  const sec = /^\d+(\.\d+)?$/.test(v) ? Number(v) : Number.NaN;
  if (!(sec >= 1 && sec <= MAX_SEC)) return { idleMs: DEFAULT_MS, problem: `${MCP_IDLE_VARIABLE} is ${JSON.stringify(v)}: give seconds, a number from 1 to ${MAX_SEC}` };
  return { idleMs: Math.round(sec * 1000) };
}
