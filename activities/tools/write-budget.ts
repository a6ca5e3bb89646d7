/**
 * The workspace budget as the host file tools apply it (a session must not fill the host
 * disk). One workspaceUsage() walk of a 5,000-file workspace took 130–400 ms on the shared
 * 2-core test machine, too much for every write, so the figure is kept per workspace for a
 * few seconds and the tools add their own growth to it. A refusal always rests on a fresh
 * walk; an admission may rest on a figure up to USAGE_FRESH_MS old that misses what the
 * sandbox wrote meanwhile, which run_shell's own limits police.
 */
import { toolError } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';
import { workspaceUsage } from './workspace-usage';

/** How long a walked figure is trusted for admitting writes. */
const USAGE_FRESH_MS = 5_000;

const known = new Map<string, { bytes: number; at: number }>();

/** A WORKSPACE_FULL result when growing the workspace at `root` by `growth` bytes would take it over `maxBytes`, else undefined. */
export async function overBudget(root: string, growth: number, maxBytes: number, shown: string): Promise<ToolResult | undefined> {
  // Writes that do not grow the workspace always pass, so a full workspace can still be cut down.
  if (growth <= 0) return undefined;
  let usage = known.get(root);
  if (!usage || Date.now() - usage.at > USAGE_FRESH_MS || usage.bytes + growth > maxBytes) {
    usage = { bytes: (await workspaceUsage(root)).bytes, at: Date.now() };
    forgetStale();
    known.set(root, usage);
  }
  if (usage.bytes + growth <= maxBytes) return undefined;
  return toolError(
    'WORKSPACE_FULL',
    `writing "${shown}" would take the workspace to ${usage.bytes + growth} bytes, over its budget of ${maxBytes} bytes`,
    { suggestion: 'delete files that are no longer needed, or write less' },
  );
}

/** Adds what a file tool just wrote to the kept figure of `root`. */
export function noteGrowth(root: string, growth: number): void {
  const usage = known.get(root);
  if (usage) usage.bytes += growth;
}

// Keeps the map to the workspaces written in the last few seconds.
function forgetStale(): void {
  const now = Date.now();
  for (const [root, usage] of known) if (now - usage.at > USAGE_FRESH_MS) known.delete(root);
}
