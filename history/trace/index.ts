/**
 * `harness trace`: the story of a session (all its turns) or of one turn, rebuilt from Temporal
 * history alone — the session's runs name its turns, each turn's runs hold its steps — and, with
 * `--full`, the payloads history names by hash, read from the message store.
 */
import type { Client } from '@temporalio/client';
import { UserError } from '../../machine/errors';
import { sessionOfTurnId } from '../../deterministic/turn-id';
import { noAgentTurn } from '../unknown-turn';
import { HistoryBatchTooLarge } from '../read-history';
import { addPayloads, addStoredRecords, SessionPayloads, type OpenedStore } from './payloads';
import { fetchRuns, type Run } from './runs';
import { readTimeline } from './timeline';
import { buildTurnSpans, type SentBy } from './turn-spans';
import { scheduleOfUpdate } from '../../deterministic/schedule';
import { backgroundSender, type BackgroundFrom } from '../../deterministic/background';
import { traceId, type BuiltSpan } from './types';
import { addCosts } from './cost-spans';
import { addSubAgentSpans } from './sub-agent-spans';
import { turnLedger } from '../ledger/compute';

export type { Span } from './types';

/** A trace: the spans of one session (every turn) or of one turn, in story order. */
export interface Trace {
  kind: 'session' | 'turn';
  id: string;
  sessionId: string;
  /** The session's own state (session traces). */
  session?: { status: string; turns: number; runs: number };
  spans: BuiltSpan[];
  /** Things the reader should know (a store that could not be read, a turn history gone). */
  notes: string[];
}

/** Options of a trace: a message store to read payloads from (`--full`). */
interface TraceOptions {
  store?: OpenedStore;
  /** The runs of `id`, when the caller fetched them already (fork reads them too). */
  runs?: Run[];
  /** With a store: each model call's whole input as `context` (for OTLP export). */
  wholeInput?: boolean;
}

/** Loads the trace of a session or turn id; an id Temporal does not know is a one-line UserError. */
export async function loadTrace(client: Client, id: string, opts: TraceOptions = {}): Promise<Trace> {
  const runs = opts.runs ?? (await fetchRuns(client, id));
  if (!runs.length) {
    const unknownAgent = noAgentTurn(id);
    if (unknownAgent) throw unknownAgent;
    throw new UserError(
      `no session or turn ${id} in Temporal`,
      '`harness sessions` lists sessions; a turn id is <session>/turn-N. Temporal keeps histories for its retention period (24 hours on the embedded dev server)',
    );
  }
  const type = runs[0]!.workflowType;
  const notes: string[] = [];
  const store = opts.store && 'store' in opts.store ? opts.store.store : undefined;
  if (opts.store && 'problem' in opts.store) notes.push(`the message store cannot be read (${opts.store.problem}); showing what history holds`);
  const payloads = (sessionId: string) => (store ? new SessionPayloads(store, sessionId) : undefined);
  const missing = (p: SessionPayloads | undefined) => {
    if (p?.missing.size) notes.push(`${p.missing.size} stored value(s) are missing from the message store (purged?)`);
  };

  if (type === 'turnWorkflow') {
    const sessionId = sessionOf(runs) ?? sessionOfTurnId(id);
    const p = payloads(sessionId);
    const spans = await turnSpans(client, id, runs, sessionId, undefined, p, notes, opts.wholeInput);
    missing(p);
    return { kind: 'turn', id, sessionId, spans, notes };
  }
  if (type !== 'sessionWorkflow') throw new UserError(`${id} is a ${type || 'unknown'} workflow, not a session or a turn`, 'trace a session id or a turn id (<session>/turn-N, or a sub-agent\'s <session>/turn-N/agent-<call id>)');

  const turnIds: string[] = [];
  const sent = new Map<string, SentBy>();
  const accepted = new Map<string, SentBy>();
  for (const run of runs) {
    for (const e of run.events) {
      if (e.kind === 'childStarted' && !turnIds.includes(e.workflowId)) turnIds.push(e.workflowId);
      if (e.kind === 'updateAccepted' && e.name === 'sendMessage') {
        // A schedule's firing sends through the worker's client: the schedule is who sent it.
        const schedule = scheduleOfUpdate(e.updateId);
        accepted.set(e.updateId, { by: schedule ? `schedule ${schedule} (${e.identity})` : e.identity, at: e.at });
      }
      if (e.kind === 'updateCompleted' && accepted.has(e.updateId)) {
        const turnId = (e.result as { turnId?: string } | undefined)?.turnId;
        if (turnId) sent.set(turnId, accepted.get(e.updateId)!);
      }
    }
  }
  const spans: BuiltSpan[] = [];
  const p = payloads(id);
  for (const turnId of turnIds) {
    const turnRuns = await fetchRuns(client, turnId).catch((err: unknown) => {
      // One turn the client cannot read whole is a note; the session's other turns are shown.
      if (!(err instanceof HistoryBatchTooLarge)) throw err;
      notes.push(`${err.message}; not shown`);
      return undefined;
    });
    if (!turnRuns) continue;
    if (!turnRuns.length) {
      notes.push(`turn ${turnId}: its history is gone (past Temporal's retention)`);
      continue;
    }
    spans.push(...(await turnSpans(client, turnId, turnRuns, id, sent.get(turnId) ?? sentByBackground(turnRuns), p, notes, opts.wholeInput)));
  }
  missing(p);
  const last = [...runs[runs.length - 1]!.events].reverse().find((e) => e.kind === 'closed');
  // A session runs until it is ended: `open` between turns, `ended` once ended.
  const closed = last?.kind === 'closed' && last.status !== 'continued_as_new' ? last.status : undefined;
  const status = closed === undefined ? 'open' : closed === 'completed' ? 'ended' : closed;
  return { kind: 'session', id, sessionId: id, session: { status, turns: turnIds.length, runs: runs.length }, spans, notes };
}

/** A turn started by a background sub-agent's end (its input's `from`): that sub-agent sent its message, as the child ended. */
function sentByBackground(runs: readonly Run[]): SentBy | undefined {
  const started = runs[0]?.events.find((e) => e.kind === 'started');
  const from = started?.kind === 'started' ? (started.input as { from?: BackgroundFrom } | undefined)?.from : undefined;
  return from?.turnId && Array.isArray(from.path) ? { by: backgroundSender(from), at: started!.at } : undefined;
}

function sessionOf(runs: readonly Run[]): string | undefined {
  const started = runs[0]?.events.find((e) => e.kind === 'started');
  const input = started?.kind === 'started' ? (started.input as { sessionId?: unknown } | undefined) : undefined;
  return typeof input?.sessionId === 'string' ? input.sessionId : undefined;
}

async function turnSpans(
  client: Client,
  turnId: string,
  runs: Run[],
  sessionId: string,
  sent: SentBy | undefined,
  payloads: SessionPayloads | undefined,
  notes: string[],
  wholeInput = false,
): Promise<BuiltSpan[]> {
  const timeline = readTimeline(runs);
  for (const r of runs) if (r.resetFrom) notes.push(`turn ${turnId} was retried (\`harness retry\`): run ${r.runId} goes on from run ${r.resetFrom}, whose steps before the reset point it replays`);
  const first = (err: unknown) => (err as Error).message.split('\n')[0];
  if (payloads) await addStoredRecords(timeline, payloads).catch((err: unknown) => notes.push(`turn ${turnId}: its stored call records cannot be read (${first(err)})`));
  const spans = buildTurnSpans(turnId, timeline, { traceId: traceId(sessionId), sessionId, ...(sent ? { sent } : {}) });
  // What the turn and each call cost, by the ledger (history/ledger): the figures `harness cost` gives.
  addCosts(spans, turnLedger(turnId, timeline));
  if (payloads) await addPayloads(spans, payloads, { wholeInput }).catch((err: unknown) => notes.push(`turn ${turnId}: its payloads cannot be read (${first(err)}); showing what history holds`));
  // Sub-agents' turns, under the calls that started them.
  await addSubAgentSpans(spans, turnId, runs, (id) => fetchRuns(client, id), (id, childRuns) => turnSpans(client, id, childRuns, sessionId, undefined, payloads, notes, wholeInput), notes);
  return spans;
}
