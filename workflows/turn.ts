/** turnWorkflow: one user turn, the ReAct loop driven by activities, waiting on humans durably. */
import {
  condition,
  getExternalWorkflowHandle,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { parsePolicy } from '../common/policy/schema';
import type { ApprovalRecord, TurnInput, TurnResult, TurnState } from '../common/session';
import {
  answerUpdate,
  decideApprovalsUpdate,
  turnStateQuery,
  turnStatusSignal,
  type TurnStatusSignal,
} from './definitions';
import { runTurn } from './turn-loop';

type Activities = ReturnType<typeof createActivities>;

const { prepareTurn, executeTool } = proxyActivities<Activities>({
  // Tools carry their own timeouts (run_shell up to 10 minutes); this bounds a stuck worker.
  startToCloseTimeout: '11 minutes',
  retry: { maximumAttempts: 3, initialInterval: '200ms', nonRetryableErrorTypes: ['INVALID_SESSION', 'INVALID_SCRIPT'] },
});

// Fast host-local tools: one attempt is a few milliseconds, so a short timeout and local retries.
const { executeTool: executeToolLocally } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, initialInterval: '100ms' },
});

/** Runs one turn of a session and returns its result; failures of the model end it as `failed`. */
export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const { limits } = input.config;
  const { callModel } = proxyActivities<Activities>({
    startToCloseTimeout: limits.modelTimeoutMs,
    heartbeatTimeout: limits.modelHeartbeatMs,
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: limits.modelMaxAttempts },
  });
  // Sessions recorded before the permission policy existed replay without it.
  const policy = patched('permission-policy') ? (input.config.policy ?? parsePolicy(undefined)) : undefined;
  // Turns recorded before local activities ran every tool as a regular activity.
  const localTools = patched('local-fast-tools');
  const { compressContext } = proxyActivities<Activities>({
    startToCloseTimeout: limits.modelTimeoutMs,
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  // Turns recorded before compression existed never compressed.
  const compression = patched('context-compression');

  const state: TurnState = { turnId: input.turnId, status: 'running', step: 0 };
  const answers = new Map<string, string>();
  const decisions = new Map<string, ApprovalRecord>();
  setHandler(turnStateQuery, () => state);
  setHandler(
    answerUpdate,
    (a) => {
      const callId = state.pending!.kind === 'question' ? state.pending!.callId : '';
      answers.set(callId, a.text);
      state.pending = undefined;
      state.status = 'running';
      return { accepted: true, callId };
    },
    {
      validator: (a) => {
        const p = state.pending;
        if (!p || p.kind !== 'question') throw new Error('no question is pending in this turn');
        if (a.callId && a.callId !== p.callId) throw new Error(`no pending question has call id ${a.callId}`);
        if (typeof a.text !== 'string' || a.text.trim() === '') throw new Error('the answer must be non-empty text');
      },
    },
  );
  setHandler(
    decideApprovalsUpdate,
    async (d) => {
      const pending = state.pending!.kind === 'approvals' ? state.pending!.calls : [];
      const ids = d.callIds?.length ? d.callIds : pending.map((c) => c.callId);
      for (const id of ids) {
        decisions.set(id, {
          approved: d.approve,
          ...(d.by ? { by: d.by } : {}),
          ...(d.at ? { at: d.at } : {}),
          ...(d.reason ? { reason: d.reason } : {}),
          ...(d.always ? { always: true } : {}),
        });
      }
      const left = pending.filter((c) => !decisions.has(c.callId));
      state.pending = left.length ? { kind: 'approvals', calls: left } : undefined;
      if (!left.length) state.status = 'running';
      // Keep the session's view in step when only part of the step was decided.
      else if (patched('approvals-partial-notify')) await notifyParent({ turnId: input.turnId, status: 'waiting_for_approval', pending: state.pending! });
      return { decided: ids };
    },
    {
      validator: (d) => {
        const p = state.pending;
        if (!p || p.kind !== 'approvals') throw new Error('no approval is pending in this turn');
        if (typeof d?.approve !== 'boolean') throw new Error('approve must be true or false');
        const open = new Set(p.calls.map((c) => c.callId));
        for (const id of d.callIds ?? []) {
          if (!open.has(id)) throw new Error(`call ${id} is not pending (unknown or already decided); pending: ${[...open].join(', ')}`);
        }
        if (d.always && !d.approve) throw new Error('--always only goes with an approval');
      },
    },
  );

  const m = input.config.model;
  const prepared = await prepareTurn({
    sessionId: input.sessionId,
    model: m.provider === 'scripted' ? { provider: 'scripted', model: m.model, script: m.script } : m,
    ...(input.config.memory ? { memory: input.config.memory } : {}),
    ...(input.config.skills?.folders.length ? { skillFolders: input.config.skills.folders } : {}),
  });

  const waitForHuman = async (pending: NonNullable<TurnState['pending']>, done: () => boolean, timeoutMs: number): Promise<boolean> => {
    state.status = pending.kind === 'question' ? 'waiting_for_user' : 'waiting_for_approval';
    state.pending = pending;
    await notifyParent({ turnId: input.turnId, status: state.status, pending });
    const ok = await condition(done, timeoutMs);
    state.status = 'running';
    state.pending = undefined;
    await notifyParent({ turnId: input.turnId, status: 'running' });
    return ok;
  };

  const result = await runTurn(
    input,
    {
      callModel,
      ...(compression ? { compressContext } : {}),
      executeTool: ({ local, ...call }) =>
        (local && localTools ? executeToolLocally : executeTool)({
          sessionId: input.sessionId,
          turnId: input.turnId,
          ...call,
          ...(input.config.memory ? { namespace: input.config.memory.namespace } : {}),
          ...(input.config.network?.allowPrivateHosts.length ? { allowPrivateHosts: input.config.network.allowPrivateHosts } : {}),
        }),
      onStep: (step) => {
        state.step = step;
      },
      askUser: async (callId, question) => {
        const answered = await waitForHuman({ kind: 'question', callId, question }, () => answers.has(callId), limits.askUserTimeoutMs);
        return answered ? answers.get(callId) : undefined;
      },
      awaitApprovals: async (calls) => {
        await waitForHuman({ kind: 'approvals', calls }, () => calls.every((c) => decisions.has(c.callId)), limits.approvalTimeoutMs);
        const out = new Map<string, ApprovalRecord>();
        for (const c of calls) out.set(c.callId, decisions.get(c.callId) ?? { approved: false, timedOut: true });
        return out;
      },
    },
    {
      ...(policy ? { policy } : {}),
      context: {
        ...(prepared?.skillsIndex ? { skillsIndex: prepared.skillsIndex } : {}),
        ...(prepared?.memories?.length ? { memories: prepared.memories } : {}),
      },
    },
  );
  state.status = 'done';
  return result;
}

/** Tells the parent session about a wait; a turn started on its own has no parent to tell. */
async function notifyParent(status: TurnStatusSignal): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent) return;
  await getExternalWorkflowHandle(parent.workflowId).signal(turnStatusSignal, status);
}
