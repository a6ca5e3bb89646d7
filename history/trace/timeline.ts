/**
 * A turn's runs read as one timeline: activities with their attempts and outcomes, local
 * activity markers, waits for a human (the turn's status signals to its session), updates
 * (approvals, answers), MCP server questions, grouped by the step they happened in. Steps
 * never span runs (a long turn continues as new between steps), so the runs are read in order.
 */
import type { PendingMessage } from '../../deterministic/conversation';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import type { Pending } from '../../deterministic/session-state';
import type { ToolCallRecord } from '../../deterministic/call-records';
import type { ChatMessage } from '../../deterministic/types';
import type { Run } from './runs';
import { continueModelCall, reportedAttempt } from './model-calls';
import { countedAttempt } from './events';
import { readSleeps, type SleepItem } from './sleeps';
import { readSteers, type SteerItem } from './steers';

/** An activity: scheduled, maybe started (its last attempt), maybe closed. */
export interface ActivityItem {
  type: string;
  input: Record<string, unknown>;
  step: number;
  scheduledAt: number;
  /** The attempt that closed it (or is recorded as started); later attempts replace earlier ones in history. */
  attempt?: number;
  /** The failure of the attempt before `attempt`: Temporal keeps only the last one. */
  lastFailure?: string;
  identity?: string;
  closedAt?: number;
  result?: unknown;
  failure?: string;
  /** What the failure carried besides its message (a model call's wasted usage). */
  failureDetails?: unknown;
  timedOut?: boolean;
  canceled?: boolean;
}

/** A local activity's marker: its outcome, recorded when the workflow task completed. */
export interface LocalItem {
  type: string;
  step: number;
  at: number;
  scheduledAt?: number;
  completedAt?: number;
  /** When the workflow began what it did next (it had ended by then; its marker's time may be seconds later). */
  nextAt?: number;
  attempt: number;
  /** The order the workflow scheduled it in (calls that ran together end in any order). */
  seq?: number;
  result?: unknown;
  failure?: string;
}

/** The turn waiting for a human: from its status signal to the session until it runs again. */
export interface Wait {
  step: number;
  at: number;
  pending: Pending;
  endedAt?: number; // when the turn ran again (or asked again, for the calls a partial decision left)
  /** When the wait's timer fired (nobody decided or answered in time). */
  timedOutAt?: number;
}

/** An update the turn accepted (decideApprovals, answer) and how it ended. */
export interface UpdateItem {
  step: number;
  at: number;
  updateId: string;
  name: string;
  identity: string;
  args: unknown;
  completedAt?: number;
  result?: unknown;
  failure?: string;
}

/** A question an MCP server asked during a call (`mcpQuestion` signal). */
export interface McpQuestionItem {
  step: number;
  at: number;
  key: string;
  callId: string;
  server: string;
  message: string;
}

/** A tool execution in the order the workflow ran them within its step. */
export type Execution = { kind: 'activity'; item: ActivityItem } | { kind: 'local'; item: LocalItem };

export interface Timeline {
  input?: TurnInput;
  startedAt?: number;
  /** How the last run closed; undefined while it runs. */
  closed?: { at: number; status: string; result?: TurnResult; failure?: string };
  runs: number;
  activities: ActivityItem[];
  executions: Map<number, Execution[]>;
  waits: Wait[];
  updates: UpdateItem[];
  mcpQuestions: McpQuestionItem[];
  /** The `wait` calls it slept in (sleeps.ts; absent: none read). */
  sleeps?: SleepItem[];
  /** Messages sent to it while it ran (steers.ts; absent: none read). */
  steers?: SteerItem[];
  /** Call records from the turn result and from the state each run continued with. */
  records: Map<string, ToolCallRecord>;
  /** Hashes of call-record chunks kept in the message store (long turns). */
  storedRecords: string[];
  /** Inline tool messages the workflow sent back to the model, by call id. */
  toolMessages: Map<string, { role: 'tool'; tool_call_id: string; content: string }>;
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/** Reads a turn's runs (oldest first) into its timeline. */
export function readTimeline(runs: readonly Run[]): Timeline {
  const t: Timeline = {
    runs: runs.length,
    activities: [],
    executions: new Map(),
    waits: [],
    updates: [],
    mcpQuestions: [],
    records: new Map(),
    storedRecords: [],
    toolMessages: new Map(),
  };
  let step = 0;
  const exec = (s: number, e: Execution) => {
    const list = t.executions.get(s) ?? [];
    list.push(e);
    t.executions.set(s, list);
  };
  const openWait = () => (t.waits.at(-1)?.endedAt === undefined ? t.waits.at(-1) : undefined);

  for (const [runIndex, run] of runs.entries()) {
    const scheduled = new Map<number, ActivityItem>();
    const updates = new Map<string, UpdateItem>();
    // The last tool marker, until the next thing the workflow began bounds when it ended.
    let lastLocal: LocalItem | undefined;
    // When the local attempt of a model call that was not answered there (handed on, or failed) began.
    let localModelStart: number | undefined;
    for (const e of run.events) {
      const began = e.kind === 'scheduled' ? e.at : e.kind === 'localActivity' ? (e.scheduledAt ?? e.at) : undefined;
      if (began !== undefined && lastLocal) {
        lastLocal.nextAt = began;
        lastLocal = undefined;
      }
      switch (e.kind) {
        case 'started': {
          const input = obj(e.input) as unknown as TurnInput;
          if (runIndex === 0) {
            t.input = input;
            t.startedAt = e.at;
          }
          const resume = input.resume;
          if (resume) {
            for (const r of resume.toolCalls ?? []) t.records.set(r.callId, r);
            addStored(t, resume.storedToolCalls);
            addMessages(t, resume.conversation?.pending);
          }
          break;
        }
        case 'scheduled': {
          const input = obj(e.input);
          if (typeof input.step === 'number' && (e.activityType === 'callModel' || e.activityType === 'compressContext')) step = input.step;
          const item: ActivityItem = { type: e.activityType, input, step: typeof input.step === 'number' ? input.step : step, scheduledAt: e.at };
          if (e.activityType === 'callModel') {
            continueModelCall(t.activities, item, localModelStart);
            localModelStart = undefined;
          }
          scheduled.set(e.id, item);
          t.activities.push(item);
          if (e.activityType === 'executeTool') exec(item.step, { kind: 'activity', item });
          if (e.activityType === 'callModel' || e.activityType === 'compressContext') {
            addMessages(t, (obj(input.conversation).pending as PendingMessage[] | undefined) ?? []);
            addMessages(t, ((input.messages as ChatMessage[] | undefined) ?? []).map((message) => ({ message })));
          }
          break;
        }
        case 'activityStarted': {
          const item = scheduled.get(e.scheduledId);
          // A model call a failed local attempt handed on counts on from it, and names its failure.
          const lastFailure = e.lastFailure ?? item?.lastFailure ?? (e.attempt === 1 ? earlierFailure(item?.input) : undefined);
          if (item) Object.assign(item, { attempt: countedAttempt(item.input, e.attempt), identity: e.identity }, lastFailure ? { lastFailure } : {});
          break;
        }
        case 'activityCompleted': {
          const item = scheduled.get(e.scheduledId);
          if (item) Object.assign(item, { closedAt: e.at, result: e.result });
          break;
        }
        case 'activityFailed': {
          const item = scheduled.get(e.scheduledId);
          if (item) Object.assign(item, { closedAt: e.at, failure: e.failure, timedOut: e.timedOut }, e.details !== undefined ? { failureDetails: e.details } : {}, reportedAttempt(e.details));
          break;
        }
        case 'activityCanceled': {
          const item = scheduled.get(e.scheduledId);
          if (item) Object.assign(item, { closedAt: e.at, canceled: true, failure: 'cancelled' });
          break;
        }
        case 'localActivity': {
          // Model calls answered locally read as activities (events.ts): this one went on as one.
          if (e.activityType === 'callModel') localModelStart = e.scheduledAt ?? e.at;
          if (e.activityType !== 'executeTool') break;
          const item: LocalItem = {
            type: e.activityType,
            step,
            at: e.at,
            attempt: e.attempt,
            ...(e.seq !== undefined ? { seq: e.seq } : {}),
            ...(e.scheduledAt !== undefined ? { scheduledAt: e.scheduledAt } : {}),
            ...(e.completedAt !== undefined ? { completedAt: e.completedAt } : {}),
            ...(e.failure !== undefined ? { failure: e.failure } : { result: e.result }),
          };
          exec(step, { kind: 'local', item });
          lastLocal = item;
          break;
        }
        case 'signalSent': {
          const s = obj(e.input);
          if (e.name !== 'turnStatus') break;
          const open = openWait();
          if (open) open.endedAt = e.at;
          if (s.pending && (s.status === 'waiting_for_approval' || s.status === 'waiting_for_user' || s.status === 'waiting_for_budget')) {
            // A budget wait comes before its step's model call: it names the step itself.
            const p = s.pending as Pending;
            t.waits.push({ step: p.kind === 'budget' && typeof p.step === 'number' ? p.step : step, at: e.at, pending: p });
          }
          break;
        }
        case 'timerFired': {
          // A wait's timer fires only when nobody decided or answered in time (else it is cancelled).
          const w = openWait();
          if (w) w.timedOutAt = e.at;
          break;
        }
        case 'signaled': {
          if (e.name !== 'mcpQuestion') break;
          const q = obj(e.input);
          t.mcpQuestions.push({
            step,
            at: e.at,
            key: String(q.key ?? ''),
            callId: String(q.callId ?? ''),
            server: String(q.server ?? ''),
            message: String(q.message ?? ''),
          });
          break;
        }
        case 'updateAccepted': {
          const u: UpdateItem = { step, at: e.at, updateId: e.updateId, name: e.name, identity: e.identity, args: e.args };
          updates.set(e.updateId, u);
          t.updates.push(u);
          break;
        }
        case 'updateCompleted': {
          const u = updates.get(e.updateId);
          if (u) Object.assign(u, { completedAt: e.at }, e.failure !== undefined ? { failure: e.failure } : { result: e.result });
          break;
        }
        case 'closed': {
          if (e.status === 'continued_as_new') break;
          const result = e.status === 'completed' ? (obj(e.result) as unknown as TurnResult) : undefined;
          t.closed = { at: e.at, status: e.status, ...(result ? { result } : {}), ...(e.failure ? { failure: e.failure } : {}) };
          if (result) {
            for (const r of result.toolCalls ?? []) t.records.set(r.callId, r);
            addStored(t, result.storedToolCalls);
            addMessages(t, result.conversation?.pending);
            addMessages(t, (result.messages ?? []).map((message) => ({ message })));
          }
          break;
        }
      }
    }
  }
  t.sleeps = readSleeps(runs);
  t.steers = readSteers(runs);
  return t;
}

/** The failure of the local attempt a model call's activity took over from, if it did. */
function earlierFailure(input: Record<string, unknown> | undefined): string | undefined {
  const f = obj(input?.earlier).failure;
  return typeof f === 'string' && f ? `${f} (local attempt)` : undefined;
}

function addStored(t: Timeline, hashes: readonly string[] | undefined): void {
  for (const h of hashes ?? []) if (!t.storedRecords.includes(h)) t.storedRecords.push(h);
}

/** Inline tool messages by call id (a large one is stored: its call's outcome names the hash). */
function addMessages(t: Timeline, pending: readonly PendingMessage[] | undefined): void {
  for (const p of pending ?? []) {
    const m = 'message' in p ? p.message : undefined;
    if (m?.role === 'tool' && !t.toolMessages.has(m.tool_call_id)) t.toolMessages.set(m.tool_call_id, m);
  }
}
