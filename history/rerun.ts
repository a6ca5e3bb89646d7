/**
 * `harness rerun`: reproduce a recorded turn offline. A new session forks the turn at step 1 with
 * the recorded replies as its model (nothing is asked of a real model), the recorded human
 * decisions for the same calls, and a fresh workspace seeded with the files the run had to work
 * on; the tools of the sandbox run again there. Calls that leave the sandbox (http_request, MCP
 * and custom tools, remember_longterm: deterministic/effects.ts) are answered with their recorded
 * results and never made; with `liveEffects` they are made, each judged by the policy afresh (no
 * recorded approval applies to them). The session compares the new conversation with the record
 * and keeps the first divergence in its state (and history).
 */
import path from 'node:path';
import { statSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { callDigest } from '../deterministic/digest';
import { leavesSandbox } from '../deterministic/effects';
import type { TurnResult } from '../deterministic/session';
import type { EffectCall, RecordedDecision, RerunReport } from '../deterministic/fork';
import { UsageError, UserError } from '../machine/errors';
import { modelCallsByStep, planFork, type ForkPlan } from './fork';
import type { BuiltSpan } from './trace/types';

/** How a rerun is made. */
interface RerunOptions {
  /** Seed the workspace with this folder's files. */
  workspace?: string;
  /** Make the calls that leave the sandbox again, each judged by the policy (default: answer them from the record). */
  liveEffects?: boolean;
}

/**
 * Plans a rerun of `turnId`. The workspace seed is `workspace` (a folder), else the workspace as
 * the turn began (the snapshot its start took), else, for turns recorded before snapshots, the
 * source session's workspace as it is now.
 */
export async function planRerun(client: Client, turnId: string, opts: RerunOptions = {}): Promise<ForkPlan> {
  // The fork's plan read the turn's runs and trace once: the result and decisions come from them.
  const plan = await planFork(client, turnId, 1);
  const closed = plan.record.runs.at(-1)?.events.find((e) => e.kind === 'closed');
  if (!closed) throw new UserError(`turn ${turnId} is still running`, 'rerun it once it has ended');
  const result = (closed.kind === 'closed' ? closed.result : undefined) as TurnResult | undefined;
  if (!result?.conversation) {
    throw new UserError(`turn ${turnId} has no recorded result to rerun (it ${closed.kind === 'closed' ? closed.status.replace('_', ' ') : 'ended'})`, `retry it first: harness retry ${turnId}`);
  }
  // planFork seeds from the turn's starting snapshot when the record names one.
  const seed = opts.workspace ? { dir: folder(opts.workspace) } : (plan.spec.seed ?? { session: plan.spec.from.sessionId });
  // A recorded approval of a call that leaves the sandbox never applies again: answered from the
  // record, the call asks nobody; made again (--live-effects), it is asked about afresh.
  const decisions = recordedDecisions(plan.record.spans, turnId).filter((d) => !d.leaves).map(({ leaves: _l, ...d }) => d);
  const replay = { conversation: result.conversation, decisions, ...(opts.liveEffects ? {} : { effects: effectCalls(plan.record.spans) }) };
  return { ...plan, spec: { ...plan.spec, modelCallBase: 0, writes: [], replay, seed }, notRestored: [] };
}

/**
 * The recorded turn's calls that leave the sandbox, each with the id the rerun's first turn gives
 * it: the same step and place in the reply (`t<turn>-s<step>-c<index>` becomes `t1-s<step>-c<index>`).
 */
function effectCalls(spans: BuiltSpan[]): EffectCall[] {
  const out: EffectCall[] = [];
  for (const { span } of spans) {
    if (span.type !== 'tool_call' || !leavesSandbox(span.name, span.source)) continue;
    const at = typeof span.input.call_id === 'string' ? /^t\d+-(s\d+-c\d+)$/.exec(span.input.call_id) : null;
    if (at) out.push({ recorded: span.input.call_id as string, callId: `t1-${at[1]}`, tool: span.name });
  }
  return out;
}

/** Where a rerun's workspace came from, in words. */
export function seedWords(plan: ForkPlan): string {
  const seed = plan.spec.seed;
  if (seed && 'dir' in seed) return seed.dir;
  if (seed && 'snapshot' in seed) return `the workspace of ${plan.spec.from.sessionId} as it was when the turn began`;
  return `the workspace of ${plan.spec.from.sessionId} as it is now (the turn was recorded before turns kept their starting workspace)`;
}

/** What the rerun does with the calls that leave the sandbox, in words. */
export function effectsWords(plan: ForkPlan): string {
  const effects = plan.spec.replay?.effects;
  if (!effects) return 'calls that leave the sandbox (http_request, MCP and custom tools, remember_longterm) are made again, each judged by the policy afresh (--live-effects)';
  const n = effects.length;
  return `calls that leave the sandbox (http_request, MCP and custom tools, remember_longterm) are answered from the record, not made${n ? ` (${n} in the record)` : ''}`;
}

/**
 * The call index a live fork of a rerun at `step` goes on with when it keeps the recorded model:
 * the recorded turn's own index at that step (the rerun's own calls were numbered from 0), else
 * one past its first call per step.
 */
export function recordedCallIndex(plan: ForkPlan, step: number): number | undefined {
  const calls = modelCallsByStep(plan.record.runs);
  const at = calls.get(step)?.callIndex;
  if (at !== undefined) return at;
  const first = calls.get(1)?.callIndex;
  return first === undefined ? undefined : first + step - 1;
}

/** The human decisions of a recorded turn, by the digest of the call decided, and whether that call leaves the sandbox. */
function recordedDecisions(spans: BuiltSpan[], turnId: string): (RecordedDecision & { leaves: boolean })[] {
  const calls = new Map(spans.map((s) => [s.span.span_id, s]));
  const out: (RecordedDecision & { leaves: boolean })[] = [];
  for (const { span } of spans) {
    if (span.type !== 'approval' || !span.output || span.output.approved === undefined) continue;
    const call = span.parent_id ? calls.get(span.parent_id) : undefined;
    const args = (call?.refs?.kind === 'tool_call' ? call.refs.args : undefined) ?? call?.span.input.args;
    const digest = typeof span.input.digest === 'string' ? span.input.digest : call ? callDigest(call.span.name, args) : undefined;
    if (!digest) continue;
    const reason = span.output.timed_out ? 'nobody decided in time in the record' : typeof span.output.reason === 'string' ? span.output.reason : undefined;
    // A decision whose call is unknown is taken as one about a call that leaves the sandbox.
    const leaves = call ? leavesSandbox(call.span.name, call.span.source) : true;
    out.push({ digest, approved: span.output.approved === true, from: turnId, ...(reason ? { reason } : {}), leaves });
  }
  return out;
}

/** The report in lines: the first divergence, or that none was found. */
export function rerunLines(turnId: string, r: RerunReport): string[] {
  if (!r.diverged) return [`no divergence: ${r.compared} step(s) of ${turnId} gave the recorded results again${r.note ? ` (${r.note})` : ''}`];
  const f = r.first!;
  return [`diverged at step ${f.step}${f.callId ? ` (${f.callId})` : ''}: ${f.what}`, `  recorded: ${f.recorded}`, `  now:      ${f.now}`];
}

function folder(dir: string): string {
  const abs = path.resolve(dir);
  let ok = false;
  try {
    ok = statSync(abs).isDirectory();
  } catch {
    // reported below
  }
  if (!ok) throw new UsageError(`${dir} is not a folder`, '--workspace names the folder whose files the rerun starts with');
  return abs;
}
