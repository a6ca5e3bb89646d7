/** turnWorkflow: one user turn, the ReAct loop driven by activities. */
import {
  condition,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { createActivities } from '../activities';
import type { TurnInput, TurnResult, TurnState, Pending } from '../common/session';
import { answerUpdate, turnStateQuery, turnStatusSignal, type TurnStatusSignal } from './definitions';
import { runTurn } from './turn-loop';

type Activities = ReturnType<typeof createActivities>;

const { prepareTurn, executeTool } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3, initialInterval: '200ms', nonRetryableErrorTypes: ['INVALID_SESSION'] },
});

/** Runs one turn of a session and returns its result; failures of the model end it as `failed`. */
export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const { limits } = input.config;
  const { callModel } = proxyActivities<Activities>({
    startToCloseTimeout: limits.modelTimeoutMs,
    heartbeatTimeout: limits.modelHeartbeatMs,
    retry: {
      initialInterval: '500ms',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      maximumAttempts: limits.modelMaxAttempts,
    },
  });

  const state: TurnState = { turnId: input.turnId, status: 'running', step: 0 };
  const answers = new Map<string, string>();
  setHandler(turnStateQuery, () => state);
  setHandler(
    answerUpdate,
    (a) => {
      const callId = (state.pending as Pending).callId;
      answers.set(callId, a.text);
      state.pending = undefined;
      state.status = 'running';
      return { accepted: true, callId };
    },
    {
      validator: (a) => {
        if (!state.pending || state.status !== 'waiting_for_user') throw new Error('no question is pending in this turn');
        if (a.callId && a.callId !== state.pending.callId) throw new Error(`no pending question has call id ${a.callId}`);
        if (typeof a.text !== 'string' || a.text.trim() === '') throw new Error('the answer must be non-empty text');
      },
    },
  );

  const m = input.config.model;
  await prepareTurn({
    sessionId: input.sessionId,
    model: m.provider === 'scripted' ? { provider: 'scripted', model: m.model, script: m.script } : m,
  });

  const result = await runTurn(input, {
    callModel,
    executeTool: (call) => executeTool({ sessionId: input.sessionId, turnId: input.turnId, ...call }),
    onStep: (step) => {
      state.step = step;
    },
    askUser: async (callId, question) => {
      state.status = 'waiting_for_user';
      state.pending = { kind: 'question', callId, question };
      await notifyParent({ turnId: input.turnId, status: 'waiting_for_user', pending: state.pending });
      const answered = await condition(() => answers.has(callId), limits.askUserTimeoutMs);
      state.status = 'running';
      state.pending = undefined;
      await notifyParent({ turnId: input.turnId, status: 'running' });
      return answered ? answers.get(callId) : undefined;
    },
  });
  state.status = 'done';
  return result;
}

/** Tells the parent session about a wait; a turn started on its own has no parent to tell. */
async function notifyParent(status: TurnStatusSignal): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent) return;
  await getExternalWorkflowHandle(parent.workflowId).signal(turnStatusSignal, status);
}
