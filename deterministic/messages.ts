/**
 * Messages of the session and turn workflows, defined once and shared with clients (the CLI).
 * Kept free of workflow-runtime imports so clients can import it.
 */
import { defineQuery, defineSignal, defineUpdate } from './definitions';
import type { SessionState, TurnState, SessionStatus, Pending, Sleeping } from './session-state';
import type { McpServerStatus } from './mcp';
import type { EvalProgress } from './eval';
import type { BudgetScope, BudgetUnit } from './budget';

/** A user message for the session. */
export interface SendMessageInput {
  text: string;
  maxSteps?: number;
  /**
   * What a message sent while a turn runs does: `queue` (absent means queue) gives it to the
   * running turn's model at its next step, `interrupt` also cancels the calls of its current
   * step, `reject` refuses it. A message sent to an idle session starts a turn either way.
   */
  whileRunning?: WhileRunning;
}

/** What a message sent while a turn runs does (SendMessageInput.whileRunning). */
export type WhileRunning = 'queue' | 'interrupt' | 'reject';
export const WHILE_RUNNING: readonly WhileRunning[] = ['queue', 'interrupt', 'reject'];

/** Where the turn started by a message can be found. */
export interface SendMessageResult {
  turn: number;
  turnId: string;
  /** The message went to the running turn `turnId` (queued for its next step, or interrupting it). */
  steered?: 'queue' | 'interrupt';
}

/** Session → running turn: a user message for its next step (`interrupt`: cancel the current step's calls first). */
export interface SteerInput {
  id: string;
  text: string;
  mode: 'queue' | 'interrupt';
}

/** An answer to a pending ask_user question. Who answered is the identity of the client in the update's history event. */
interface AnswerInput {
  text: string;
  /** The ask_user call being answered; defaults to the pending one. */
  callId?: string;
  /** Sent by clients from before identities were taken from history; ignored. */
  by?: string;
}

/** Status a turn reports to its session while it waits on a human. */
export interface TurnStatusSignal {
  turnId: string;
  status: SessionStatus;
  pending?: Pending;
  /** The turn sleeps in a `wait` call (its status stays `running`): until when, and why. */
  sleeping?: Sleeping;
}

/**
 * Starting a turn is an Update, not a Signal: the caller gets the turn id back synchronously
 * and a validator rejects bad input (empty text, an ended session, a turn already running
 * when the message says `reject`) before anything is written to history.
 */
export const sendMessageUpdate = defineUpdate<SendMessageResult, [SendMessageInput]>('sendMessage');
/** Ending a session. */
interface EndSessionInput {
  reason?: string;
  /** Once ended, delete what the session stored (message store, workspace, records, container). */
  purge?: boolean;
}

/** Ends the session once it is idle. */
export const endSessionUpdate = defineUpdate<{ ended: true }, [EndSessionInput]>('endSession');
/** Lists the session's MCP tools again now (between turns); returns how each server did. */
export const refreshMcpToolsUpdate = defineUpdate<{ servers: McpServerStatus[] }, []>('refreshMcpTools');
/** Which failed turn `harness retry` is about to reset, and the run it resets (the session waits past it). */
export interface RetryTurnInput {
  turn: number;
  runId: string;
}
/**
 * `harness retry`: the session takes its last, failed turn back before the turn is reset, waits
 * for the reset run and adopts its result in place of the failed one. Refused (nothing written)
 * unless the turn is the session's last and the session is idle.
 */
export const retryTurnUpdate = defineUpdate<{ accepted: true; turnId: string }, [RetryTurnInput]>('retryTurn');
/** The session's status, pending items, turn count and usage. */
export const stateQuery = defineQuery<SessionState>('state');
/** Turn → session: the turn started or stopped waiting on a human. */
export const turnStatusSignal = defineSignal<[TurnStatusSignal]>('turnStatus');

/**
 * Answers go straight to the turn that asked, as an Update: its validator rejects an answer
 * when no question is pending (or the call id is wrong), so a stale answer changes nothing.
 */
export const answerUpdate = defineUpdate<{ accepted: true; callId: string }, [AnswerInput]>('answer');
/** One call a human decides, with the digest of the tool and arguments they were shown. */
export interface DecidedCall {
  callId: string;
  digest: string;
}

/**
 * A human decision on pending approvals. It names each call and the digest of what the human
 * saw: a call whose tool or arguments differ, or that is not pending, is refused. When the
 * decision was taken comes from the workflow clock and who took it from the client identity
 * Temporal records with the update: neither is taken from this body.
 */
export interface ApprovalDecisionInput {
  calls?: DecidedCall[];
  approve: boolean;
  reason?: string;
  /** Approve this call for the rest of the session: exactly this command (or host, or tool). */
  always?: boolean;
  /** With `always`, for a run_shell call: grant programs whose command line starts with these
   * words (`git commit`) instead of exactly the command shown. */
  pattern?: string;
  /** Ids without digests, as clients from before approval binding sent them: refused by newer turns. */
  callIds?: string[];
  /** Sent by clients from before approval binding; ignored by newer turns. */
  by?: string;
  at?: string;
}

/**
 * Approvals are an Update on the turn: the validator rejects unknown or already decided call
 * ids before anything is written, so a stale `approve` changes nothing.
 */
export const decideApprovalsUpdate = defineUpdate<ApprovalDecisionResult, [ApprovalDecisionInput]>('decideApprovals');

/** What an approval update did: the calls it decided and, for `--always`, what it granted. */
interface ApprovalDecisionResult {
  decided: string[];
  /** One line per rule an `--always` added to the session (`run_shell exactly \`…\``). */
  granted?: string[];
}

/**
 * A person's decision on a turn waiting for its budget: raise the budget it reached (by an amount
 * in that budget's unit, so "+5" can never be read as dollars when tokens were meant), or stop
 * the turn (it ends `budget_exceeded`, keeping its work). Who decided is the update's identity.
 */
export interface BudgetDecisionInput {
  raise?: { unit: BudgetUnit; amount: number };
  stop?: boolean;
  reason?: string;
}

/** What a budget decision did: the budget's new ceiling, or that the turn stops. */
export interface BudgetDecisionResult {
  scope: BudgetScope;
  unit: BudgetUnit;
  limit?: number;
  stopped?: true;
}

/** Raises or stops a turn waiting for its budget; refused (nothing written) when no budget wait is pending. */
export const decideBudgetUpdate = defineUpdate<BudgetDecisionResult, [BudgetDecisionInput]>('decideBudget');

/** An eval's progress: trials done, passed, failed, running, and its concurrency now. */
export const evalProgressQuery = defineQuery<EvalProgress>('evalProgress');

/** The turn's own view: running, waiting, or done; the pending question. */
export const turnStateQuery = defineQuery<TurnState>('turnState');

/**
 * Largest user message (and answer) in UTF-8 bytes. Temporal refuses payloads over 2 MB, and a
 * message travels again in the turn's input and in every model call of the conversation; a
 * quarter of a megabyte (~64k tokens) leaves room for the rest of the conversation.
 */
export const MAX_MESSAGE_BYTES = 256 * 1024;

/** UTF-8 length of a string without Buffer or TextEncoder (usable in workflow code). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4; // a surrogate pair is one 4-byte code point
      i++;
    } else bytes += 3; // the rest of the BMP, and lone surrogates (sent as U+FFFD)
  }
  return bytes;
}

/** Activity → turn: a server asks the human something during call `callId`. */
export interface McpQuestion {
  /** `<callId>#e<n>`: the n-th question of the call (the same on a retried attempt). */
  key: string;
  callId: string;
  server: string;
  message: string;
  requestedSchema: Record<string, unknown>;
}

/**
 * MCP questions (elicitation): the activity holding the call tells the turn with this signal; the
 * question is then pending like an ask_user one (`status` shows it, `harness answer` replies through
 * the same update), and the activity reads the answer back with the query below. The question and
 * the answer are events in the turn's history.
 */
/** A message for the running turn (SteerInput); the signal in the turn's history is the record of it. */
export const steerSignal = defineSignal<[SteerInput]>('steer');
export const mcpQuestionSignal = defineSignal<[McpQuestion]>('mcpQuestion');
/** The answer given to a question, by key (undefined while none). */
export const mcpAnswerQuery = defineQuery<string | undefined, [string]>('mcpAnswer');
/**
 * What the activity holding the call waits on instead of asking the query again and again: the
 * update completes when the question (by key) is answered, or dropped (its call ended).
 */
export const mcpAnswerWaitUpdate = defineUpdate<McpAnswerWait, [string]>('mcpAnswerWait');
export type McpAnswerWait = { answer: string } | { dropped: true };

/** `harness wake`: ends the wait of a sleeping turn early. Who woke it is also the client identity in the update's history event. */
export interface WakeInput {
  /** Why, told to the model with the wait call's result. */
  reason?: string;
  /** Who woke it, as the client names itself (told to the model; history keeps the identity too). */
  by?: string;
  /** The wait call meant (from `status`): refused when another call sleeps now. */
  callId?: string;
}

/** What a wake ended: the wait call and the time it would have slept until. */
export interface WakeResult {
  woken: true;
  callId: string;
  until: string;
}

/** Wakes a turn sleeping in a `wait` call; its validator refuses (nothing written) when the turn is not sleeping. */
export const wakeUpdate = defineUpdate<WakeResult, [WakeInput]>('wake');
