/**
 * The tools a model call offers, as the model sees them: the built-ins the call names, and the
 * session's MCP and custom tools read from the lists the session stored (cached: one read per
 * worker and list), so the model sees those tools as the session recorded them, whatever this
 * worker's own definitions say. In a session with structured output, finish is offered with the
 * output's JSON schema as its parameters (deterministic/finish-output.ts): given with the call
 * (stored for the run's later calls, which name it by hash) or read back by its hash.
 *
 * The order is pinned, since the tools are part of the prompt's cached prefix: built-ins in the
 * worker's declaration order, then sub-agents and custom tools, then MCP tools; sub-agents and
 * MCP tools by name, custom tools as declared.
 */
import type { ModelCallInput } from '../deterministic/activity-types';
import { outputFinishSpec } from '../deterministic/finish-output';
import { customToolView, type CustomToolSpec } from '../deterministic/custom-tools';
import type { McpToolInfo } from '../deterministic/mcp';
import type { ToolSpec } from '../deterministic/types';
import { mcpToolSpec } from './mcp/specs';
import { subAgentOf } from '../deterministic/sub-agents';
import type { Conversations } from './store/conversations';
import { withStore } from './store/errors';

/** The specs of a model call's tools (`builtin`: the worker's built-in specs). */
export function createToolSpecs(
  builtin: readonly ToolSpec[],
  conversations: Conversations,
  subAgent: (name: string) => ToolSpec | undefined = () => undefined,
): (input: ModelCallInput) => Promise<ToolSpec[]> {
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
  // By hash alone: the same text whichever session stored it, so the cache grows with distinct schemas only.
  const schemas = new Map<string, Promise<Record<string, unknown>>>();
  const outputSchema = async (input: ModelCallInput): Promise<Record<string, unknown> | undefined> => {
    const ref = input.outputSchema;
    if (!ref) return undefined;
    if (ref.text !== undefined) {
      // Stored for the run's later calls, which name it by hash (only a turn with the store does).
      const text = ref.text;
      if (input.conversation) await withStore(() => conversations.putText(input.sessionId, text));
      return JSON.parse(text) as Record<string, unknown>;
    }
    let schema = schemas.get(ref.hash);
    if (!schema) {
      schema = withStore(() => conversations.getText(input.sessionId, ref.hash)).then((text) => JSON.parse(text) as Record<string, unknown>);
      schema.catch(() => schemas.delete(ref.hash));
      schemas.set(ref.hash, schema);
    }
    return schema;
  };
  return async (input) => {
    const schema = await outputSchema(input);
    const builtins = builtin.filter((s) => input.tools.includes(s.name)).map((s) => (schema && s.name === 'finish' ? outputFinishSpec(s, schema) : s));
    // Sub-agents (agent__<name>), described as this worker declares them (a name it lacks is not offered).
    const agents = input.tools
      .flatMap((n) => {
        const name = subAgentOf(n);
        const spec = name === undefined ? undefined : subAgent(name);
        return spec ? [spec] : [];
      })
      .sort(byName);
    const local = agents.length ? [...builtins, ...agents] : builtins;
    if (!input.mcpTools && !input.customTools) return local;
    const added = await Promise.all([
      input.customTools ? storedList(input.sessionId, input.customTools, (text) => (JSON.parse(text) as CustomToolSpec[]).map(customToolView)) : [],
      // By name: a server may list its tools in another order each time, which would move the prefix.
      input.mcpTools ? storedList(input.sessionId, input.mcpTools, (text) => (JSON.parse(text) as McpToolInfo[]).map(mcpToolSpec).sort(byName)) : [],
    ]);
    return [...local, ...added.flat().filter((s) => input.tools.includes(s.name))];
  };
}

/** Plain code-unit order (no locale): the same on every worker. */
function byName(a: ToolSpec, b: ToolSpec): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
