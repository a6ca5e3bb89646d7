/**
 * The ReAct step loop, independent of Temporal: the turn workflow runs it with activities,
 * the step benchmark runs it in-process. It must stay deterministic (no clocks, I/O, randomness).
 * This file is the loop's awaits in order; what it decides between them is in step-decisions.ts,
 * step-model.ts and step-tools.ts, what it holds in turn-state.ts, its inputs in turn-ops.ts.
 */
import type { ModelReply, ToolOutcome } from '../../deterministic/activity-types';
import { rootCauseMessage } from '../../deterministic/errors';
import type { TurnInput, TurnResult, TerminatedBy } from '../../deterministic/session';
import { buildSystemMessage } from './system-message';
import { approvalRequest, judgeStep, type JudgedCall } from './judge';
import { countReply, resumeAt, startLoop, turnResult } from './state';
import { assistantMessage, compressionRecord, modelCallInput, overThreshold, stepCalls, stepTraffic } from '../step-model';
import {
  applyApprovals,
  askedCalls,
  callRecord,
  cancelledCallError,
  continuationPoint,
  failedStepsAfter,
  recordsChunkDue,
  repeatedActionError,
  stepNotes,
  stepRules,
  StepTally,
  RECORDS_CHUNK,
} from './step';
import { toolExecution, workflowTool } from '../step-tools';
import { answerFromRecord } from './recorded-effects';
import type { TurnContinuation, TurnOps, TurnOptions } from '../turn-ops';

// The loop's types and records chunk stay importable from the loop's module, where they were defined.
export type { ToolExecution, TurnContinuation, TurnOps, TurnOptions } from '../turn-ops';
export { RECORDS_CHUNK } from './step';

/** Runs one turn to termination (or to a continue-as-new point) and returns its result. Tool failures never throw. */
export async function runTurn(input: TurnInput, ops: TurnOps, opts: TurnOptions = {}): Promise<TurnResult | TurnContinuation> {
  const { limits } = input.config;
  const maxSteps = input.maxSteps ?? limits.maxSteps;
  const s = startLoop(input, opts);

  const done = (terminated_by: TerminatedBy, answer: string, steps: number, error?: string): TurnResult =>
    turnResult(input, opts, s, { terminated_by, answer, steps, error }, ops.spent?.());
  const addResult = (callId: string, outcome: ToolOutcome) => {
    s.conversation.addResult(callId, outcome);
    s.open = s.open.filter((c) => c.id !== callId);
  };

  const first = input.resume?.step ?? 1;
  let step = first;
  if (opts.refuse) return done('failed', `The turn could not start: ${opts.refuse}`, 0, opts.refuse);
  try {
    return await loop();
  } catch (err) {
    if (!ops.isCancellation?.(err)) throw err;
    for (const c of s.open) addResult(c.id, cancelledCallError());
    return done('cancelled', s.lastContent || 'The turn was cancelled.', step);
  }

  async function loop(): Promise<TurnResult | TurnContinuation> {
    for (step = first; step <= maxSteps; step++) {
      const stopHere = continuationPoint(s.conversation, step, first);
      if (stopHere && ops.shouldContinueAsNew?.()) return { continueAsNew: resumeAt(s, opts, step, stopHere, ops.spent?.()) };
      ops.onStep?.(step);
      const system = buildSystemMessage(input.config.systemPrompt, s.memory, opts.context);
      const compression = input.config.compression;
      if (compression && ops.compressContext && overThreshold(s.conversation, system, compression)) {
        try {
          // Once over the threshold, compress fully (compact every big result, summarise the
          // middle): stopping just under the threshold would trigger again a step later.
          const c = await ops.compressContext({ ...stepTraffic(input, s, step, system), config: compression, force: true });
          if (s.conversation.compressed(c)) s.compressions.push(compressionRecord(step, c));
        } catch (err) {
          // A failed compression is not a failed turn: go on with the full context. A
          // cancellation is not a failure: it ends the turn.
          if (ops.isCancellation?.(err)) throw err;
        }
      }
      const refused = ops.admitModelCall && (await ops.admitModelCall(step, s.conversation.estimate(system)));
      if (refused) return done('budget_exceeded', refused, step - 1);
      let reply: ModelReply;
      try {
        reply = await ops.callModel(modelCallInput(stepTraffic(input, s, step, system), input, opts, s, step));
      } catch (err) {
        if (ops.isCancellation?.(err)) throw err;
        // ops.callModel throws only once retries are spent or the error is permanent.
        const why = rootCauseMessage(err);
        return done('failed', `The model call failed: ${why}`, step, why);
      }
      countReply(s, reply);
      const calls = stepCalls(reply, opts, input.turn, step);
      s.conversation.replied(reply, assistantMessage(reply, calls));
      if (calls.length === 0) return done('final_answer', reply.content ?? '', step);
      s.open = [...calls];

      const verdict = s.repeat.observe(calls);
      if (verdict === 'stop') {
        for (const c of calls) addResult(c.id, repeatedActionError());
        return done('repeated_action', s.lastContent || 'Stopped: the same action was repeated.', step);
      }

      const judged = judgeStep(calls, s.registry, opts.policy, stepRules(s, opts), opts.boundedInput);
      if (opts.recorded) answerFromRecord(judged, opts.recorded);
      const asked = askedCalls(judged);
      if (asked.length) applyApprovals(asked, await ops.awaitApprovals(asked.map(approvalRequest)), opts.policy, s.sessionRules);

      const tally = new StepTally();
      for (const j of judged) {
        const result = j.result ?? (await run(j, step));
        tally.add(j, result);
        s.toolCalls.push(callRecord(j, step, result));
        addResult(j.call.id, result);
      }
      if (tally.finishAnswer !== undefined) return done('finish', tally.finishAnswer, step);
      // A server said its tool list changed: the next step offers what it lists now.
      if (tally.relist.size && s.mcpTools && opts.mcp && ops.rediscoverMcp) {
        const next = await ops.rediscoverMcp(s.mcpTools, [...tally.relist]);
        // The same set (unchanged, or past the re-listings a run takes in): nothing to rebuild.
        if (next !== s.mcpTools) {
          s.mcpTools = next;
          s.registry = opts.mcp.registry(s.mcpTools);
          s.mcpChanged = true;
        }
      }
      // A long turn's call records go to the store in chunks, so its state and result stay small.
      if (ops.storeValue && recordsChunkDue(s)) s.storedToolCalls.push(await ops.storeValue(s.toolCalls.splice(0, RECORDS_CHUNK)));
      for (const note of stepNotes(calls, reply.droppedCalls, verdict, s.repeat)) s.conversation.add(note);
      s.failedSteps = failedStepsAfter(s.failedSteps, tally);
      if (s.failedSteps >= limits.errorLimit) {
        return done('error_limit', s.lastContent || `Stopped after ${s.failedSteps} consecutive failed steps.`, step);
      }
    }
    return done('max_steps', s.lastContent || `Stopped after ${maxSteps} steps without a final answer.`, maxSteps);
  }

  /** Runs an admitted call: the workflow's own tools in the workflow, the rest through ops.executeTool. */
  async function run(j: JudgedCall, step: number): Promise<ToolOutcome> {
    const def = j.def!;
    if (def.runsIn !== 'workflow') {
      return ops.executeTool(toolExecution(j, def, step));
    }
    return workflowTool(j, def, s.memory, ops, opts.boundedInput === true);
  }
}
