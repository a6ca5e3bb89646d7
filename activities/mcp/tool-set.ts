/**
 * A session's MCP tool set across re-listings. A turn names the set it has by reference (its
 * servers' statuses and the stored list), never inline: discovery reads it back from the store
 * for the servers it does not list again, and a re-listing that finds the same tools says so
 * instead of returning them, so history holds a list once, not once per call of a server that
 * keeps saying its list changed.
 */
import type { DiscoverMcpInput } from '../../deterministic/activity-types';
import type { McpToolInfo, McpToolSet } from '../../deterministic/mcp';
import type { Conversations } from '../store/conversations';
import { withStore } from '../store/errors';

/** The set a re-listing starts from, and its stored text when it was named by reference. */
interface PreviousSet {
  set: McpToolSet | undefined;
  text: string | undefined;
}

/** The set the input names: inline (turns recorded before), by reference, or none (first discovery). */
export async function previousSet(conversations: Conversations, input: DiscoverMcpInput): Promise<PreviousSet> {
  if (input.previous) return { set: input.previous, text: undefined };
  const named = input.previousRef;
  if (!named) return { set: undefined, text: undefined };
  const text = named.ref ? await withStore(() => conversations.getText(input.sessionId, named.ref!)) : '[]';
  return { set: { servers: named.servers, tools: JSON.parse(text) as McpToolInfo[], ...(named.ref ? { ref: named.ref } : {}) }, text };
}
