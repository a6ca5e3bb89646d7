/**
 * Messages of the session and turn workflows, defined once and shared with clients (the CLI).
 * Kept free of workflow-runtime imports beyond the define* helpers so clients can import it.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SessionState, TurnState, SessionStatus, Pending } from '../common/session';

/** A user message for the session. */
export interface SendMessageInput {
  text: string;
  maxSteps?: number;
}

/** Where the turn started by a message can be found. */
export interface SendMessageResult {
  turn: number;
  turnId: string;
}

/** An answer to a pending ask_user question. */
export interface AnswerInput {
  text: string;
  /** Who answered (user@host or a service name), kept in history. */
  by?: string;
  /** The ask_user call being answered; defaults to the pending one. */
  callId?: string;
}

/** Status a turn reports to its session while it waits on a human. */
export interface TurnStatusSignal {
  turnId: string;
  status: SessionStatus;
  pending?: Pending;
}

/**
 * Starting a turn is an Update, not a Signal: the caller gets the turn id back synchronously
 * and a validator rejects bad input (empty text, a turn already running, an ended session)
 * before anything is written to history.
 */
export const sendMessageUpdate = defineUpdate<SendMessageResult, [SendMessageInput]>('sendMessage');
/** Ends the session once it is idle. */
export const endSessionUpdate = defineUpdate<{ ended: true }, [{ reason?: string }]>('endSession');
/** The session's status, pending items, turn count and usage. */
export const stateQuery = defineQuery<SessionState>('state');
/** Turn → session: the turn started or stopped waiting on a human. */
export const turnStatusSignal = defineSignal<[TurnStatusSignal]>('turnStatus');

/**
 * Answers go straight to the turn that asked, as an Update: its validator rejects an answer
 * when no question is pending (or the call id is wrong), so a stale answer changes nothing.
 */
export const answerUpdate = defineUpdate<{ accepted: true; callId: string }, [AnswerInput]>('answer');
/** A human decision on pending approvals. */
export interface ApprovalDecisionInput {
  /** Calls to decide; default: every pending call of the step. */
  callIds?: string[];
  approve: boolean;
  by?: string;
  /** When the human decided (their clock; history also timestamps the update). */
  at?: string;
  reason?: string;
  /** Approve this tool (and command prefix) for the rest of the session. */
  always?: boolean;
}

/**
 * Approvals are an Update on the turn: the validator rejects unknown or already decided call
 * ids before anything is written, so a stale `approve` changes nothing.
 */
export const decideApprovalsUpdate = defineUpdate<{ decided: string[] }, [ApprovalDecisionInput]>('decideApprovals');

/** The turn's own view: running, waiting, or done; the pending question. */
export const turnStateQuery = defineQuery<TurnState>('turnState');
