/**
 * How the loop runs an admitted call: the request ops.executeTool gets for a tool that runs
 * outside the workflow, and the tools the workflow itself implements (finish, remember,
 * ask_user). Pure and deterministic but for ask_user, which waits on ops.askUser.
 */
import type { ToolOutcome } from '../deterministic/activity-types';
import { toolError, toolOk } from '../deterministic/errors';
import type { ToolDefinition } from '../deterministic/tools';
import type { JudgedCall } from './turn/judge';
import type { ToolExecution, TurnOps } from './turn-ops';
import { rememberFact } from './working-memory';

/** The executeTool request of a call: its tool's timeout and where it runs, and for MCP and custom tools whether it may run twice. */
export function toolExecution(j: JudgedCall, def: ToolDefinition, step: number): ToolExecution {
  const args = j.args as Record<string, unknown>;
  const local = def.runsIn === 'local_activity';
  const mcp = def.mcpTool !== undefined && def.source.startsWith('mcp:') ? { mcp: { server: def.source.slice(4), tool: def.mcpTool, idempotent: def.annotations?.idempotentHint === true || def.annotations?.readOnlyHint === true } } : {};
  const custom = def.source === 'custom' ? { custom: { idempotent: def.idempotent === true } } : {};
  return { step, callId: j.call.id, name: def.name, args, timeoutMs: def.timeoutMs, local, readOnly: def.risk === 'read_only', ...(j.policy ? { policy: j.policy } : {}), ...mcp, ...custom };
}

/**
 * Runs a tool the workflow implements; any other name has no implementation here and is a result
 * the model reads. Not async: finish and remember answer without the extra microtask turns an
 * async call adds, as when the loop ran them inline; only ask_user waits.
 */
export function workflowTool(j: JudgedCall, def: ToolDefinition, memory: Record<string, string>, ops: Pick<TurnOps, 'askUser'>, bounded: boolean): ToolOutcome | Promise<ToolOutcome> {
  const args = j.args as Record<string, unknown>;
  switch (def.name) {
    case 'finish':
      return toolOk({ finished: true });
    case 'remember': {
      const { key, value } = args as { key: string; value: string };
      return rememberFact(memory, key, value, bounded);
    }
    case 'ask_user':
      return askUser(j, (args as { question: string }).question, ops);
    default:
      return toolError('UNKNOWN_TOOL', `Tool "${def.name}" has no workflow implementation.`, { recoverable: false });
  }
}

/** ask_user: the human's answer, or a timeout the model reads. */
async function askUser(j: JudgedCall, question: string, ops: Pick<TurnOps, 'askUser'>): Promise<ToolOutcome> {
  const answer = await ops.askUser(j.call.id, question);
  if (answer !== undefined) return toolOk({ answer });
  return toolError('USER_TIMEOUT', 'The user did not answer in time.', {
    suggestion: 'Continue with what you know, or finish and say what is missing.',
  });
}
