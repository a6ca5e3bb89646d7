/**
 * `harness fork`: a new session that goes on with a recorded turn from one of its steps. What
 * the fork starts from is read from the turn's history alone: the conversation the model call
 * of that step carried (by reference to the message store), the turn's input (config, memory,
 * rules), the `remember` and `write_file` calls of the steps before. The steps before are not
 * asked of the model again and none of their tools runs again: the fork's first model call is the
 * one of the fork step. Its calls from there are judged like any new call: of the source
 * session's `--always` grants it keeps only those of tools whose effects stay in the sandbox.
 */
import type { Client } from '@temporalio/client';
import { isBlobArg, type PendingMessage } from '../deterministic/conversation';
import type { TurnInput } from '../deterministic/session';
import type { ForkSpec, ForkWrite } from '../deterministic/fork';
import type { ModelSpec, SessionConfig } from '../deterministic/session-config';
import { UsageError, UserError } from '../machine/errors';
import type { PrepareTurnResult } from '../deterministic/activity-types';
import type { WorkspaceSnapshot } from '../deterministic/snapshot';
import { loadTrace } from './trace';
import { noAgentTurn } from './unknown-turn';
import { fetchRuns, type Run } from './trace/runs';
import type { BuiltSpan } from './trace/types';
import { callsBefore } from './trace/before-step';
import type { ToolMode } from '../deterministic/tool-mode';
import { leavesSandbox, sandboxRules } from '../deterministic/effects';
import type { Rule } from '../deterministic/policy/schema';

/** What a fork changes of the recorded turn. */
export interface ForkEdits {
  /** The system prompt from this text. */
  system?: string;
  /** The last user message before the step, as this text. */
  message?: string;
  /** Another model: its calls are numbered from 0 (a new script starts at its first step) unless `modelCallBase` says otherwise. */
  model?: ModelSpec;
  /** Where the fork's model calls are numbered from (default: the record's index at the step, or 0 with another model). */
  modelCallBase?: number;
  /** The fork's step limit, counted like the record's steps (default: the recorded turn's limit). */
  maxSteps?: number;
}

/** A fork ready to start: the new session's config and input, and what it could not take over. */
export interface ForkPlan {
  config: SessionConfig;
  spec: ForkSpec;
  /** Steps the recorded turn ran before the fork step (taken from the record). */
  kept: { steps: number; modelCalls: number; toolCalls: number };
  /** Calls before the step whose effects the fork's workspace does not have, in words. */
  notRestored: string[];
  /** The source session's `--always` grants the fork does not keep (tools that leave the sandbox). */
  grantsDropped: Rule[];
  /** The recorded turn is a sub-agent's: the agents from the session's down to it (the fork runs as the last). */
  agentPath?: string[];
  /** What the plan was read from (the turn's runs and trace), for callers that need more of it. */
  record: { runs: Run[]; spans: BuiltSpan[] };
}

/** Plans a fork of `turnId` at `step`; a step the turn never reached is a one-line UserError. */
export async function planFork(client: Client, turnId: string, step: number, edits: ForkEdits = {}): Promise<ForkPlan> {
  const runs = await fetchRuns(client, turnId);
  if (!runs.length) throw noAgentTurn(turnId) ?? new UserError(`no turn ${turnId} in Temporal`, '`harness status <session>` names its turns; Temporal keeps histories for its retention period');
  if (runs[0]!.workflowType !== 'turnWorkflow') throw new UserError(`${turnId} is not a turn`, 'a turn id is <session>/turn-N');
  const started = runs[0]!.events.find((e) => e.kind === 'started');
  const input = (started?.kind === 'started' ? started.input : undefined) as TurnInput | undefined;
  if (!input?.config) throw new UserError(`the history of ${turnId} holds no turn input`, 'is it a turn of this harness?');

  // The model call of the step (its first attempt's schedule): what it carried is the
  // conversation before the step.
  const calls = modelCallsByStep(runs);
  const at = calls.get(step);
  const last = Math.max(0, ...calls.keys());
  if (!at) {
    throw new UserError(`turn ${turnId} has no step ${step}`, last ? `it made model calls at steps 1–${last}: fork at one of them` : 'it made no model call');
  }
  if (!at.conversation) {
    throw new UserError(`turn ${turnId} was recorded before the message store and cannot be forked`, 'fork a turn recorded by this version');
  }

  const trace = await loadTrace(client, turnId, { runs });
  const before = callsBefore(trace.spans, step);
  const memory = { ...input.memory };
  const writes: ForkWrite[] = [];
  const notRestored: string[] = [];
  let modelCalls = 0;
  for (const c of before) {
    if (c.span.type === 'llm_call') {
      if (c.span.status === 'ok') modelCalls++;
      continue;
    }
    if (c.span.status !== 'ok') continue;
    const args = (c.refs?.kind === 'tool_call' ? c.refs.args : undefined) ?? c.span.input.args;
    const a = (args ?? {}) as Record<string, unknown>;
    if (c.span.name === 'remember' && typeof a.key === 'string' && typeof a.value === 'string') {
      if (a.value === '') delete memory[a.key];
      else memory[a.key] = a.value;
    } else if (c.span.name === 'write_file' && typeof a.path === 'string') {
      writes.push({ step: c.step, path: a.path, content: a.content, ...(a.append === true ? { append: true } : {}) });
    } else if (c.span.name === 'run_shell' || leavesSandbox(c.span.name, c.span.source)) {
      const what = typeof a.command === 'string' ? a.command : typeof a.url === 'string' ? a.url : '';
      notRestored.push(`${c.span.name} at step ${c.step}${what ? ` (${clip(what)})` : ''}: its effects are not in the record`);
    }
  }
  // The workspace as the turn began is the base the turn's writes go over; turns recorded
  // before snapshots had none, and their earlier turns' files cannot be restored.
  const snapshot = startSnapshot(runs);
  if (!snapshot && input.turn > 1) notRestored.unshift(`files from the ${input.turn - 1} earlier turn(s) of the session are not restored`);

  // Steps are numbered on from the record, so the limit counts them as the recorded turn did
  // (its per-turn `run --max-steps` is in its input; the config's limit otherwise).
  const maxSteps = edits.maxSteps ?? input.maxSteps;
  const limit = maxSteps ?? input.config.limits.maxSteps;
  if (limit < step) {
    throw new UsageError(
      `--max-steps ${limit} leaves the fork no step: steps are numbered on from the record, and the fork starts at step ${step}`,
      `give --max-steps ${step} or more (the recorded turn's limit was ${input.maxSteps ?? input.config.limits.maxSteps})`,
    );
  }

  // The recorded model is offered the tools as the recorded turn did (auto decided it there, or
  // the session carried it): the same mode, not a new guess. Another model decides its own.
  const recordedMode = input.toolMode?.mode ?? recordedToolMode(trace.spans);
  const config: SessionConfig = {
    ...ownConfig(input),
    ...(edits.system !== undefined ? { systemPrompt: edits.system } : {}),
    ...(edits.model ? { model: edits.model } : recordedMode ? { model: { ...ownConfig(input).model, toolMode: recordedMode } } : {}),
  };
  const script = config.model.provider === 'scripted' ? config.model.script : undefined;
  const rules = sandboxRules(input.sessionRules ?? []);
  const spec: ForkSpec = {
    from: { sessionId: input.sessionId, turnId, step },
    conversation: { head: at.conversation.head, pending: at.conversation.pending },
    ...(edits.message !== undefined ? { editMessage: edits.message } : {}),
    writes,
    userMessage: edits.message ?? input.userMessage,
    memory,
    sessionRules: rules.kept,
    // The recorded model answers from the same point; another one (a new script) from its start.
    modelCallBase: edits.modelCallBase ?? (edits.model ? 0 : (at.callIndex ?? 0)),
    ...(maxSteps !== undefined ? { maxSteps } : {}),
    ...(snapshot ? { seed: { snapshot, from: input.sessionId } } : {}),
    // A recorded script kept in the source's store is copied with the conversation.
    ...(isBlobArg(script) ? { copyBlobs: [script.$blob] } : {}),
  };
  return {
    config,
    spec,
    kept: { steps: step - 1, modelCalls, toolCalls: before.filter((c) => c.span.type === 'tool_call').length },
    notRestored,
    grantsDropped: rules.dropped,
    ...(input.subAgent ? { agentPath: input.subAgent.path } : {}),
    record: { runs, spans: trace.spans },
  };
}

/**
 * The recorded turn's config as a session of its own runs it. A sub-agent's turn carries the
 * sub-agent's config (instructions, tools, policy, model, limits) already; its scripted model
 * played under the child turn's id, a session of it plays under its own.
 */
function ownConfig(input: TurnInput): SessionConfig {
  const m = input.config.model;
  if (!input.subAgent || m.provider !== 'scripted' || m.scriptKey === undefined) return input.config;
  const { scriptKey: _key, ...model } = m;
  return { ...input.config, model };
}

/** The tool mode the turn's model calls ran in (turns recorded before tool modes: none). */
function recordedToolMode(spans: BuiltSpan[]): ToolMode | undefined {
  const mode = spans.find((s) => s.span.type === 'llm_call' && typeof s.span.output?.tool_mode === 'string')?.span.output?.tool_mode;
  return mode === 'text' || mode === 'native' ? mode : undefined;
}

/** The recorded model calls of a turn by step (each step's first schedule). */
export function modelCallsByStep(runs: Run[]): Map<number, ModelCallRecord> {
  const out = new Map<number, ModelCallRecord>();
  for (const run of runs) {
    for (const e of run.events) {
      if (e.kind !== 'scheduled' || e.activityType !== 'callModel') continue;
      const i = e.input as ModelCallRecord;
      if (typeof i?.step === 'number' && !out.has(i.step)) out.set(i.step, i);
    }
  }
  return out;
}

/**
 * The snapshot of the workspace the turn's first run took as it began (prepareTurn's result), if
 * it took one: from its local activity's marker (turns since `local-prepare-turn`, a session
 * without a host) or from its activity (turns before, and a session on its host's queue).
 */
function startSnapshot(runs: Run[]): WorkspaceSnapshot | undefined {
  const events = runs[0]?.events ?? [];
  const prepared = events.find((e) => (e.kind === 'scheduled' || e.kind === 'localActivity') && e.activityType === 'prepareTurn');
  if (!prepared) return undefined;
  const done = prepared.kind === 'localActivity' ? prepared : events.find((e) => e.kind === 'activityCompleted' && e.scheduledId === prepared.id);
  const result = (done && 'result' in done ? done.result : undefined) as PrepareTurnResult | undefined;
  return result?.workspace;
}

/** What the input of a recorded model call holds that a fork reads. */
interface ModelCallRecord {
  step?: number;
  callIndex?: number;
  conversation?: { head: string | null; pending: PendingMessage[] };
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}
