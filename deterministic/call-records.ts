/**
 * What a turn records of each tool call: the call itself, how the policy judged it and what a
 * human answered. Turn results carry these, and the trace reads them back from history.
 */

/** How the policy judged a call (recorded with it). */
export interface PolicyRecord {
  decision: 'allow' | 'deny' | 'ask';
  rule?: string;
  reason: string;
}

/**
 * A human's answer to an approval request (recorded with the call). `updateId` names the
 * update in history, whose event carries when the server accepted it and the identity of the
 * client that sent it: who and when never come from the request body.
 */
export interface ApprovalRecord {
  approved: boolean;
  /** Only in turns recorded before decisions were bound server-side: what the client claimed. */
  by?: string;
  at?: string;
  updateId?: string;
  reason?: string;
  always?: boolean;
  /** The command words an `--always` granted instead of exactly the command shown. */
  pattern?: string;
  timedOut?: boolean;
  /** Decided by the record a rerun reproduces (the turn id), not by a human now. */
  fromRecord?: string;
}

/** One tool call as the turn saw it: what was asked, how it was judged, what came back. */
export interface ToolCallRecord {
  step: number;
  callId: string;
  name: string;
  args: unknown;
  ok: boolean;
  error_type?: string;
  policy?: PolicyRecord;
  approval?: ApprovalRecord;
  /** A rerun answered the call with the recorded result of this turn: it was not made. */
  replayed?: string;
}
