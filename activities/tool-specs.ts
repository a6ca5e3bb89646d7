/**
 * The tools a model call offers, as the model sees them: the built-ins the call names, and the
 * session's MCP and custom tools read from the lists the session stored (cached: one read per
 * worker and list), so the model sees those tools as the session recorded them, whatever this
 * worker's own definitions say.
 */
import type { ModelCallInput } from '../deterministic/activity-types';
import { customToolView, type CustomToolSpec } from '../deterministic/custom-tools';
import type { McpToolInfo } from '../deterministic/mcp';
import type { ToolSpec } from '../deterministic/types';
import { mcpToolSpec } from './mcp/specs';
import type { Conversations } from './store/conversations';
import { withStore } from './store/errors';

/** The specs of a model call's tools (`builtin`: the worker's built-in specs). */
export function createToolSpecs(builtin: readonly ToolSpec[], conversations: Conversations): (input: ModelCallInput) => Promise<ToolSpec[]> {
  const stored = new Map<string, Promise<ToolSpec[]>>();
  const storedList = (sessionId: string, hash: string, view: (text: string) => ToolSpec[]): Promise<ToolSpec[]> => {
    let list = stored.get(hash);
    if (!list) {
      list = withStore(() => conversations.getText(sessionId, hash)).then(view);
      list.catch(() => stored.delete(hash));
      stored.set(hash, list);
    }
    return list;
  };
  return async (input) => {
    const local = builtin.filter((s) => input.tools.includes(s.name));
    if (!input.mcpTools && !input.customTools) return local;
    const added = await Promise.all([
      input.customTools ? storedList(input.sessionId, input.customTools, (text) => (JSON.parse(text) as CustomToolSpec[]).map(customToolView)) : [],
      input.mcpTools ? storedList(input.sessionId, input.mcpTools, (text) => (JSON.parse(text) as McpToolInfo[]).map(mcpToolSpec)) : [],
    ]);
    return [...local, ...added.flat().filter((s) => input.tools.includes(s.name))];
  };
}
