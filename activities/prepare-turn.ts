/**
 * prepareTurn: what a turn needs before its first step, from the worker that runs it: the
 * session's model made reachable (a scripted script registered), its skills and long-term
 * memories, the workspace as the turn finds it, and on a first turn the custom tools it offers.
 */
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import type { EvalTrialsPrepared, PrepareTurnInput, PrepareTurnResult } from '../deterministic/activity-types';
import { isBlobArg } from '../deterministic/conversation';
import type { HostRef } from '../deterministic/host';
import type { ToolSpec } from '../deterministic/types';
import type { CustomToolSet } from '../deterministic/custom-tools';
import type { Conversations } from './store/conversations';
import type { MessageStore } from './store/message-store';
import { withStore } from './store/errors';
import { snapshotTurnStart } from './workspace-snapshot';
import type { ScriptedModels } from './scripted-models';
import type { SkillsProvider } from './skills/provider';
import type { Database } from './memory/database';
import { MemoryUnavailableError } from './memory/errors';
import { skillsIndex } from './skills/use-skill';
import { skillRules } from './skills/rules';
import type { WorkerDeclarations } from './declarations';
import { agentTools, checkAgentNamed } from './agents';
import type { createCustomTools } from './custom-tools/executor';

interface PrepareTurnDeps {
  home: string;
  specs: ToolSpec[];
  scripted: ScriptedModels;
  conversations: Conversations;
  declarations: WorkerDeclarations;
  skills: SkillsProvider;
  memory: Database;
  messageStore: () => Promise<MessageStore>;
  custom: ReturnType<typeof createCustomTools>;
  host?: HostRef;
}

export function createPrepareTurn(deps: PrepareTurnDeps) {
  return async function prepareTurn(input: PrepareTurnInput): Promise<PrepareTurnResult> {
    // At a session's first turn (the one that lists its tools), before anything runs or is offered.
    if (input.listCustomTools) checkAgentNamed(input.agent, deps.declarations);
    if (input.model.provider === 'scripted') {
      // Sessions keep a long script in the message store and carry its reference.
      const ref = input.model.script;
      const script = isBlobArg(ref) ? JSON.parse(await withStore(() => deps.conversations.getText(input.sessionId, ref.$blob))) : ref;
      try {
        await deps.scripted.register(input.model.scriptKey ?? input.sessionId, script);
      } catch (err) {
        throw ApplicationFailure.nonRetryable((err as Error).message, 'INVALID_SCRIPT');
      }
    }
    // Before anything is mounted: a session names only folders the worker declared.
    deps.declarations.checkSkillFolders(input.skillFolders);
    deps.skills.setSessionFolders(input.sessionId, input.skillFolders);
    const catalog = deps.skills.catalog(input.sessionId);
    const index = skillsIndex(catalog.skills);
    const rules = skillRules(catalog.skills);
    let memories: string[] = [];
    let memoryProblem: string | undefined;
    if (input.memory && input.memory.preload > 0) {
      try {
        const recent = await (await deps.memory.store()).recent(input.memory.namespace, input.memory.preload);
        memories = recent.map((m) => `${new Date(m.created_at).toISOString().slice(0, 10)}: ${m.text}`);
      } catch (err) {
        // A MemoryUnavailableError already says so and why; anything else gets named here.
        const why = (err as Error).message.split('\n')[0]!;
        memoryProblem = err instanceof MemoryUnavailableError ? why : `long-term memory: ${why}`;
        Context.current().log.warn(memoryProblem);
      }
    }
    // The workspace as the turn finds it, for `harness rerun` and `fork` to start from.
    const workspace = await snapshotTurnStart(deps.home, input.sessionId, deps.messageStore);
    // A session's first turn: the deps.custom tools it will offer for good (of an agent's session, the agent's).
    const only = !input.listCustomTools ? undefined : input.agent !== undefined ? agentTools(input.agent, deps.declarations) : deps.declarations.defaultAgentTools();
    const customTools = input.listCustomTools ? await deps.custom.list((text) => withStore(() => deps.conversations.putText(input.sessionId, text)), only) : undefined;
    return {
      tools: deps.specs,
      ...(customTools ? { customTools } : {}),
      ...(workspace ? { workspace } : {}),
      ...(index ? { skillsIndex: index } : {}),
      ...(memories.length ? { memories } : {}),
      ...(memoryProblem ? { memoryProblem } : {}),
      ...(catalog.problems.length ? { skillProblems: catalog.problems } : {}),
      ...(rules.length ? { skillRules: rules } : {}),
      ...(deps.host ? { host: deps.host } : {}),
    };
    };
}

/**
 * prepareEvalTrials: prepareTurn's findings that are the same for every trial of an eval, once a
 * run instead of once a trial: the worker's skills (no session folders) and its custom tools for
 * the agent. Trials then skip prepareTurn (a local activity and a store write each). Not shared,
 * so each trial prepares as before: a worker serving a sandbox host (each trial's session lives
 * there), custom tools (their list is stored per session), an agent the worker refuses (each
 * trial fails as it did).
 */
export function createPrepareEvalTrials(deps: Pick<PrepareTurnDeps, 'declarations' | 'custom' | 'skills' | 'host'>) {
  return async function prepareEvalTrials(input: { agent?: string }): Promise<EvalTrialsPrepared> {
    if (deps.host) return {};
    let stored = false;
    let customTools: CustomToolSet;
    try {
      checkAgentNamed(input.agent, deps.declarations);
      const only = input.agent !== undefined ? agentTools(input.agent, deps.declarations) : deps.declarations.defaultAgentTools();
      customTools = await deps.custom.list(async () => {
        stored = true;
        return '';
      }, only);
    } catch {
      return {};
    }
    if (stored || customTools.tools.length) return {};
    const catalog = deps.skills.catalog();
    const index = skillsIndex(catalog.skills);
    const rules = skillRules(catalog.skills);
    return { customTools, ...(index ? { skillsIndex: index } : {}), ...(rules.length ? { skillRules: rules } : {}) };
  };
}
