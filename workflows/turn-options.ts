/**
 * What the turn workflow gives its loop from the turn's input and what prepareTurn found: the
 * prepareTurn request, the tools offered (built-in, custom, MCP), the policy and rules, the
 * system message's context, and the patches the loop reads. Pure and deterministic.
 */
import type { PrepareTurnInput, PrepareTurnResult } from '../deterministic/activity-types';
import { missingTools, missingToolsMessage } from '../deterministic/custom-tools';
import { mcpRules } from '../deterministic/mcp-tools';
import type { McpToolSet } from '../deterministic/mcp';
import type { TurnInput } from '../deterministic/session';
import { turnRegistry } from './turn/mcp';
import { recordedEffectsOf } from './turn/recorded-effects';
import type { TurnOptions } from './turn-ops';
import type { TurnPatches } from './turn/patches';

/** The prepareTurn request of a turn's first run. */
export function prepareRequest(input: TurnInput): PrepareTurnInput {
  const m = input.config.model;
  return {
    sessionId: input.sessionId,
    model: m.provider === 'scripted' ? { provider: 'scripted', model: m.model, script: m.script } : m,
    ...(input.config.memory ? { memory: input.config.memory } : {}),
    ...(input.config.skills?.folders.length ? { skillFolders: input.config.skills.folders } : {}),
    // The session's first turn lists the worker's custom tools; later turns have them recorded.
    ...(input.customTools ? {} : { listCustomTools: true }),
  };
}

/** What the loop uses of prepareTurn's result (or of what the turn's first run kept of it). */
export type Prepared = Pick<PrepareTurnResult, 'skillsIndex' | 'memories' | 'skillRules' | 'customTools'>;

/** The loop's options for this run of the turn. */
export function loopOptions(
  input: TurnInput,
  prepared: Prepared,
  patches: Pick<TurnPatches, 'policy' | 'harnessCallIds' | 'scriptAwareEstimate' | 'messageStore'>,
  boundedInput: boolean,
): TurnOptions {
  const { policy, harnessCallIds, scriptAwareEstimate, messageStore } = patches;
  // The custom tools this turn offers: the session's, or the list this (first) turn got. A list
  // that lacks a tool the session needs ends the turn before any model call, and is not kept:
  // the next message lists again (on a worker that has them, once one runs).
  const listed = input.customTools ? undefined : prepared?.customTools;
  const customTools = input.customTools ?? listed;
  const missing = input.customTools ? [] : missingTools(listed, input.config.tools?.required);
  const mcpServers = input.config.mcp?.servers ?? [];
  const mcpTools = input.resume?.mcpTools ?? input.mcpTools;
  const recorded = recordedEffectsOf(input);
  return {
    ...(policy ? { policy } : {}),
    ...(mcpTools || customTools?.tools.length ? { registry: turnRegistry(mcpTools, mcpServers, boundedInput, customTools) } : {}),
    ...(mcpTools ? { mcp: { tools: mcpTools, registry: (t: McpToolSet) => turnRegistry(t, mcpServers, boundedInput, customTools), rules: (t: McpToolSet) => mcpRules(t, mcpServers) } } : {}),
    ...(customTools ? { custom: { tools: customTools, listed: listed !== undefined && !missing.length } } : {}),
    ...(missing.length ? { refuse: missingToolsMessage(missing, listed) } : {}),
    context: {
      ...(prepared?.skillsIndex ? { skillsIndex: prepared.skillsIndex } : {}),
      ...(prepared?.memories?.length ? { memories: prepared.memories } : {}),
    },
    ...(prepared?.skillRules?.length ? { turnRules: prepared.skillRules } : {}),
    harnessCallIds,
    scriptAwareEstimate,
    messageStore,
    boundedInput,
    ...(recorded ? { recorded } : {}),
  };
}
