/**
 * The ReAct step loop, independent of Temporal: the turn workflow runs it with activities,
 * the step benchmark runs it in-process. It must stay deterministic (no clocks, I/O, randomness).
 * This file is the loop's awaits in order and what it is given: the operations it needs from the
 * outside world (activities in the turn workflow, plain calls in the step benchmark) and a turn's
 * options. What it decides between its awaits is in step.ts and judge.ts, what it holds in state.ts.
 */
import type { ModelCallInput, ModelReply, ToolOutcome } from '../../deterministic/activity-types';
import type { CompressContextInput, CompressContextResult } from '../../deterministic/context/types';
import type { CustomToolSet } from '../../deterministic/custom-tools';
import { rootCauseMessage } from '../../deterministic/errors';
import type { McpToolSet } from '../../deterministic/mcp';
import type { Policy, Rule } from '../../deterministic/policy';
import type { TerminatedBy, TurnInput, TurnResult, TurnResume } from '../../deterministic/session';
import type { ApprovalRecord, PolicyRecord } from '../../deterministic/call-records';
import type { PendingApproval } from '../../deterministic/session-state';
import type { RecordedEffects } from '../../deterministic/fork';
import type { ToolRegistry } from '../../deterministic/tools';
import type { Spent } from './budget';
import { systemLayout, type TurnContext } from './system-message';
import { approvalRequest, judgeStep, type JudgedCall } from './judge';
import { countReply, resumeAt, startLoop, turnResult } from './state';
import {
  applyApprovals,
  askedCalls,
  assistantMessage,
  callRecord,
  cancelledCallError,
  compressionRecord,
  continuationPoint,
  failedStepsAfter,
  modelCallInput,
  overThreshold,
  recordsChunkDue,
  repeatedActionError,
  stepCalls,
  stepNotes,
  stepRules,
  StepTally,
  stepTraffic,
  toolExecution,
  workflowTool,
  RECORDS_CHUNK,
} from './step';
import { answerFromRecord } from './recorded-effects';
import { runStepCalls } from './step-calls';
import { outputEnd, promptOf, turnOutput } from './output';
import type { Steering } from './steer';

/** One admitted call the loop hands to ops.executeTool (every tool that does not run in the workflow). */
export interface ToolExecution {
  step: number;
  callId: string;
  name: string;
  args: unknown;
  timeoutMs: number;
  local: boolean;
  /** The tool's risk is read_only: running it changes nothing (model-call.ts orders effects' markers). */
  readOnly?: boolean;
  policy?: PolicyRecord;
  /** An MCP tool: its server, the name the server knows it by, and whether the server calls it idempotent. */
  mcp?: { server: string; tool: string; idempotent: boolean };
  /** A custom tool (defineTool), and whether it may run twice. */
  custom?: { idempotent: boolean };
}

/** What the loop needs from the outside world. */
export interface TurnOps {
  callModel(input: ModelCallInput): Promise<ModelReply>;
  executeTool(call: ToolExecution): Promise<ToolOutcome>;
  /** Waits for a human answer; resolves `undefined` on timeout. */
  askUser(callId: string, question: string): Promise<string | undefined>;
  /** The `wait` tool: sleeps the turn (absent: the tool has no implementation here). */
  wait?(callId: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  /** Waits for decisions on a step's asked calls; a missing entry counts as timed out. */
  awaitApprovals(calls: PendingApproval[]): Promise<Map<string, ApprovalRecord>>;
  /** Compresses the context (an activity); absent means never compress. */
  compressContext?(input: CompressContextInput): Promise<CompressContextResult>;
  /** Called before each model call so the host can expose progress. */
  onStep?(step: number): void;
  /**
   * Whether consecutive calls of a step that are safe to run together run at the same time
   * (step-calls.ts); asked at the first such group, absent means one at a time.
   */
  runTogether?(): boolean;
  /** Whether an error means the turn was cancelled (then it ends as `cancelled`, keeping its work). */
  isCancellation?(err: unknown): boolean;
  /** Asked between steps (with the message store): true stops the run here to continue as new. */
  shouldContinueAsNew?(): boolean;
  /** Stores a value in the message store (with it: chunks of call records); returns its hash. */
  storeValue?(value: unknown): Promise<string>;
  /** Lists the tools of the MCP servers again (a server said its list changed). */
  rediscoverMcp?(previous: McpToolSet, servers: string[]): Promise<McpToolSet>;
  /** Before each model call, with the context's estimated tokens: why the turn stops (its budget ran out, nobody raised it), or undefined. */
  admitModelCall?(step: number, contextTokens: number): Promise<string | undefined>;
  /** What the turn spent so far, for its result and the run it continues in. */
  spent?(): Spent;
  /**
   * Whether memory goes after the conversation, keeping the system message a stable prefix
   * (system-message.ts); asked only when there is memory. Absent: it does.
   */
  cachePrefix?(): boolean;
  /** Messages the user sent while the turn runs (steer.ts); absent: none arrive. */
  steering?: Steering;
}

/** Options of a turn run. */
export interface TurnOptions {
  registry?: ToolRegistry;
  /** The permission policy (a turn always has one); absent means every valid call is allowed. */
  policy?: Policy;
  /** Skills index and long-term memories for the system message. */
  context?: TurnContext;
  /** Allow rules that hold for this turn only (derived from the session's skills). */
  turnRules?: readonly Rule[];
  /** Hold the conversation by reference to the message store (every turn of a session; off only for the history benchmark's inline baseline). */
  messageStore?: boolean;
  /** The session's MCP tools (already part of `registry`), and how to build the registry again when they change. */
  mcp?: { tools: McpToolSet; registry(tools: McpToolSet): ToolRegistry; rules(tools: McpToolSet): Rule[] };
  /** The session's custom tools (already part of `registry`); `listed`: this turn listed them, and its result hands them to the session. */
  custom?: { tools: CustomToolSet; listed: boolean };
  /** Why the turn cannot run at all (tools the session needs are missing): it ends `failed` before any model call. */
  refuse?: string;
  /** A rerun: calls that leave the sandbox are answered with these recorded results (recorded-effects.ts). */
  recorded?: RecordedEffects;
  /** Structured output through finish (output.ts, withOutputFinish): the answer of a finish call, from its arguments; absent: their `answer` text. */
  finishAnswer?: (args: Record<string, unknown>) => unknown;
}

/** A run that stopped between steps to continue as new, with where it stopped. */
export interface TurnContinuation {
  continueAsNew: TurnResume;
}

/** Runs one turn to termination (or to a continue-as-new point) and returns its result. Tool failures never throw. */
export async function runTurn(input: TurnInput, ops: TurnOps, opts: TurnOptions = {}): Promise<TurnResult | TurnContinuation> {
  const { limits } = input.config;
  const maxSteps = input.maxSteps ?? limits.maxSteps;
  const s = startLoop(input, opts);

  const done = (terminated_by: TerminatedBy, answer: string, steps: number, error?: string): TurnResult =>
    turnResult(input, opts, s, { terminated_by, answer, steps, error }, ops.spent?.());
  // With structured output, a final answer that does not match it goes back to the model (output.ts).
  const output = turnOutput(input, opts);
  const answered = (by: TerminatedBy, answer: unknown, steps: number): TurnResult | undefined => {
    // Without structured output an answer is text (finish's schema says so).
    if (!output.check) return done(by, answer as string, steps);
    const end = outputEnd(output.check, s, by, answer, steps);
    return end && turnResult(input, opts, s, end, ops.spent?.());
  };
  const addResult = (callId: string, outcome: ToolOutcome) => {
    s.conversation.addResult(callId, outcome);
    s.open = s.open.filter((c) => c.id !== callId);
  };

  const first = input.resume?.step ?? 1;
  let step = first;
  if (opts.refuse) return done('failed', `The turn could not start: ${opts.refuse}`, 0, opts.refuse);
  if (output.refuse) return turnResult(input, opts, s, output.refuse, ops.spent?.());
  try {
    return await loop();
  } catch (err) {
    if (!ops.isCancellation?.(err)) throw err;
    for (const c of s.open) addResult(c.id, cancelledCallError());
    return done('cancelled', s.lastContent || 'The turn was cancelled.', step);
  }

  async function loop(): Promise<TurnResult | TurnContinuation> {
    for (step = first; step <= maxSteps; step++) {
      // Messages sent while the turn ran join the conversation here, before the next model call.
      for (const text of ops.steering?.take() ?? []) s.conversation.add({ role: 'user', content: text });
      const stopHere = continuationPoint(s.conversation, step, first);
      if (stopHere && ops.shouldContinueAsNew?.()) return { continueAsNew: resumeAt(s, opts, step, stopHere, ops.spent?.()) };
      ops.onStep?.(step);
      const { system, notes, sized } = systemLayout(promptOf(input, output.check), s.memory, opts.context, ops.cachePrefix);
      const compression = input.config.compression;
      if (compression && ops.compressContext && overThreshold(s.conversation, sized, compression)) {
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
      const refused = ops.admitModelCall && (await ops.admitModelCall(step, s.conversation.estimate(sized)));
      if (refused) return done('budget_exceeded', refused, step - 1);
      let reply: ModelReply;
      try {
        reply = await ops.callModel(modelCallInput(stepTraffic(input, s, step, system, notes), input, opts, s, step));
      } catch (err) {
        if (ops.isCancellation?.(err)) throw err;
        // ops.callModel throws only once retries are spent or the error is permanent.
        const why = rootCauseMessage(err);
        return done('failed', `The model call failed: ${why}`, step, why);
      }
      countReply(s, reply);
      const calls = stepCalls(reply, input.turn, step);
      s.conversation.replied(reply, assistantMessage(reply, calls));
      // A message the model has not read yet: the turn goes on instead of ending.
      const unread = () => step < maxSteps && ops.steering?.unread() === true;
      if (calls.length === 0) {
        if (unread()) continue;
        const end = answered('final_answer', reply.content ?? '', step);
        if (end) return end;
        continue;
      }
      s.open = [...calls];

      const verdict = s.repeat.observe(calls);
      if (verdict === 'stop') {
        for (const c of calls) addResult(c.id, repeatedActionError());
        return done('repeated_action', s.lastContent || 'Stopped: the same action was repeated.', step);
      }

      // Bounded: what model text may cost the workflow (argument depth, echoed text) is capped.
      const judged = judgeStep(calls, s.registry, opts.policy, stepRules(s, opts), true);
      if (opts.recorded) answerFromRecord(judged, opts.recorded);
      const asked = askedCalls(judged);
      if (asked.length) applyApprovals(asked, await ops.awaitApprovals(asked.map(approvalRequest)), opts.policy, s.sessionRules);

      // One at a time, or (ops.runTogether) the calls safe to run together at once; results in call order.
      const tally = new StepTally(opts.finishAnswer);
      const take: Parameters<typeof runStepCalls>[3] = (j, result) => {
        tally.add(j, result);
        s.toolCalls.push(callRecord(j, step, result));
        addResult(j.call.id, result);
      };
      const runCalls = () => runStepCalls(judged, (j) => run(j, step), ops.runTogether?.bind(ops), take);
      // An interrupting message cancels the calls still running: they get the cancelled result.
      if (ops.steering ? await ops.steering.interruptible(runCalls) : (await runCalls(), false)) {
        for (const j of judged) if (s.open.some((c) => c.id === j.call.id)) take(j, cancelledCallError());
      }
      if (tally.finishAnswer !== undefined && !unread()) {
        const end = answered('finish', tally.finishAnswer, step);
        if (end) return end;
      }
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
    return workflowTool(j, def, s.memory, ops);
  }
}
