/**
 * A session's MCP tool set by reference: its servers' statuses and the store's name for its list
 * (`ref`, a hash of the list's JSON in the session's store), without the list itself. Up to 128
 * tools × 16 KiB of schema per server would otherwise ride in every turn's input, every turn
 * result, the session's carry and each continue-as-new. The turn reads the list back once (an
 * activity) because it validates calls and builds policy rules from the schemas; the model call
 * already names the list by `ref`. Pure data.
 */
import type { McpToolSet } from './mcp';

/** The set without its list, named by `ref` (a set without a stored list is already small). */
export function toolSetByRef(set: McpToolSet): McpToolSet {
  if (!set.ref || set.stored || set.tools.length === 0) return set;
  return { servers: set.servers, tools: [], ref: set.ref, stored: true };
}

/** The store's name for a set's list when the list is not inline (the turn must read it). */
export function storedListRef(set: McpToolSet | undefined): string | undefined {
  return set?.stored && set.ref ? set.ref : undefined;
}
