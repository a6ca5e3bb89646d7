/**
 * Sub-agents: an agent may list other agents its worker declares (`agents: [researcher]`), and a
 * session of it is offered each as a tool, `agent__<name>`, taking `{ task }`. A call starts a
 * child turn workflow running the sub-agent (its own instructions, tools, policy, model and
 * limits), whose answer is the call's result. Pure and deterministic: the workflow names the
 * tools and ids with it, the worker describes the tools to the model with it.
 */
import { z } from 'zod';
import { toolError, toolOk } from './errors';
import type { ToolDefinition } from './tools';
import type { ToolResult, ToolSpec } from './types';
import type { TurnResult } from './session';

/** What a tool name of a sub-agent starts with: `agent__researcher`. */
export const SUB_AGENT_PREFIX = 'agent__';

/** Tool names are at most 64 characters: a sub-agent's name at most this many. */
export const MAX_SUB_AGENT_NAME = 64 - SUB_AGENT_PREFIX.length;

/** How deep sub-agents may nest (a sub-agent of a sub-agent is depth 2) unless limits.maxAgentDepth says otherwise. */
export const DEFAULT_MAX_AGENT_DEPTH = 2;

/** How many sub-agent calls one turn may make unless limits.maxSubAgentCalls says otherwise. */
export const DEFAULT_MAX_SUB_AGENT_CALLS = 8;

/** At most this much of an agent's instructions describe it as a tool when it has no description. */
const DESCRIPTION_CHARS = 400;

/** A sub-agent as a session offers it: its name and what the model reads of it. */
export interface SubAgentOffer {
  name: string;
  description: string;
  /** It runs in the background (deterministic/background.ts): its call starts it and returns at once. */
  background?: true;
}

/** What the model reads of a background sub-agent, after its description. */
export const BACKGROUND_NOTE = 'It runs in the background: the call returns at once with its turn id, and its result comes to you later as a message.';

/** Where a child turn stands among sub-agents: its depth (1 for a sub-agent of the session's agent) and the agents from the session's down to it. */
export interface SubAgentPlace {
  depth: number;
  /** The agents from the session's to this one: `['lead', 'researcher']`. */
  path: string[];
  /** The turn whose call started it. */
  parentTurnId: string;
  /** It runs in the background: it outlives that turn, reports to the session, and its end is a message to it. */
  background?: true;
}

/** The tool name of a sub-agent. */
export function subAgentToolName(name: string): string {
  return `${SUB_AGENT_PREFIX}${name}`;
}

/** The sub-agent a tool name calls, or undefined for any other tool. */
export function subAgentOf(toolName: string): string | undefined {
  return toolName.startsWith(SUB_AGENT_PREFIX) && toolName.length > SUB_AGENT_PREFIX.length ? toolName.slice(SUB_AGENT_PREFIX.length) : undefined;
}

/** What the model reads of a sub-agent: its description, else the start of its instructions. */
export function subAgentDescription(name: string, description: string | undefined, instructions: string): string {
  const own = description?.trim() || (instructions.length > DESCRIPTION_CHARS ? `${instructions.slice(0, DESCRIPTION_CHARS)}…` : instructions);
  return `Hand a task to the sub-agent "${name}", which works on it alone with its own tools and answers: ${own}`;
}

const TASK_DESCRIPTION = 'The task for the sub-agent, with everything it needs to know: it sees nothing of this conversation.';
let parameters: z.ZodObject | undefined;
/** `{ task }`, built when first read (the workflow bundle evaluates this module for every workflow). */
function taskParameters(): z.ZodObject {
  return (parameters ??= z.strictObject({ task: z.string().min(1).describe(TASK_DESCRIPTION) }));
}

/**
 * A sub-agent as a tool. Its risk is read_only: the call itself changes nothing, and whatever the
 * sub-agent does is judged by its own policy, call by call, and asked where it asks. It may run
 * beside the step's other such calls (each is its own child workflow).
 */
export function subAgentDefinition(offer: SubAgentOffer): ToolDefinition {
  return Object.defineProperty(
    { name: subAgentToolName(offer.name), description: offer.description, risk: 'read_only', source: 'agent', timeoutMs: 24 * 3600_000, runsIn: 'activity', parallel: true },
    'parameters',
    { enumerable: true, get: taskParameters },
  ) as ToolDefinition;
}

/** A sub-agent's tool as the model sees it. */
export function subAgentToolSpec(offer: SubAgentOffer): ToolSpec {
  return {
    name: subAgentToolName(offer.name),
    description: offer.description,
    parameters: { type: 'object', properties: { task: { type: 'string', minLength: 1, description: TASK_DESCRIPTION } }, required: ['task'], additionalProperties: false },
    risk: 'read_only',
    source: 'agent',
    timeoutMs: 24 * 3600_000,
  };
}

// The ids of child turns are read with every turn id, in a zod-free module (CLI start-up reads them); exported here too.
export { parseSubAgentTurnId, rootTurnId, subAgentTurnId } from './turn-id';

/** How a path of agents is shown: `lead › researcher`. */
export function agentPathLabel(path: readonly string[]): string {
  return path.join(' › ');
}

/** Why a call may not start a sub-agent here (too deep, too many this turn), as the result the model reads; undefined when it may. */
export function subAgentBound(o: { name: string; depth: number; maxDepth: number; calls: number; maxCalls: number }): ToolResult | undefined {
  if (o.depth > o.maxDepth) {
    return toolError('SUB_AGENT_LIMIT', `${o.name} was not started: sub-agents may nest ${o.maxDepth} deep (limits.maxAgentDepth), and this one would be ${o.depth} deep.`, {
      recoverable: false,
      suggestion: 'do the task yourself with the tools you have',
    });
  }
  if (o.calls >= o.maxCalls) {
    return toolError('SUB_AGENT_LIMIT', `${o.name} was not started: a turn may call sub-agents ${o.maxCalls} times (limits.maxSubAgentCalls), and this turn has.`, {
      recoverable: false,
      suggestion: 'finish with what the sub-agents gave you, or do the rest yourself',
    });
  }
  return undefined;
}

/** The call's result from the child turn's: its answer (or structured output) when it answered, else a structured error saying how it ended. */
export function subAgentResult(name: string, r: Pick<TurnResult, 'terminated_by' | 'answer' | 'output' | 'error' | 'steps' | 'turnId'>): ToolResult {
  if (r.terminated_by === 'final_answer' || r.terminated_by === 'finish') {
    return toolOk(r.output !== undefined ? { output: r.output, agent: name } : { answer: r.answer, agent: name });
  }
  const why = r.error ?? r.answer;
  return toolError('SUB_AGENT_FAILED', `${name} ended ${r.terminated_by} after ${r.steps} steps without an answer${why ? `: ${why}` : ''}`, {
    recoverable: r.terminated_by !== 'cancelled',
    suggestion: `see its turn with \`harness trace ${r.turnId}\`; give it a clearer task, or do it yourself`,
  });
}

/** The failure type of the worker's refusal to start a sub-agent the session's agent does not list. */
export const SUB_AGENT_NOT_ALLOWED = 'SUB_AGENT_NOT_ALLOWED';
