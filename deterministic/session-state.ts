/**
 * What the `state` and `turnState` queries answer: a session's status, and what a turn waits on a
 * human for (a question, calls to approve, a budget to raise).
 */
import type { Risk, Usage } from './types';
import type { BudgetBreach, Spend } from './budget';
import type { McpServerStatus } from './mcp';
import type { ToolModeDecision } from './tool-mode';
import type { RerunReport } from './fork';
import type { TerminatedBy } from './session';

/** Session status as the `state` query reports it. */
export type SessionStatus = 'idle' | 'running' | 'waiting_for_user' | 'waiting_for_approval' | 'waiting_for_budget' | 'ended';

/** A tool call waiting for a human decision. */
export interface PendingApproval {
  callId: string;
  tool: string;
  args: unknown;
  /** Digest of tool and arguments: a decision must name it, so it applies only to what was shown. */
  digest?: string;
  risk: Risk;
  rule?: string;
  reason: string;
}

/** Something a turn waits on a human for: a question, or the calls of one step to approve. */
export type Pending = (
  | { kind: 'question'; callId: string; question: string }
  | { kind: 'approvals'; calls: PendingApproval[] }
  | ({ kind: 'budget'; step?: number } & BudgetBreach)
) & {
  /**
   * A sub-agent's wait, shown where its session's are: the child turn that waits (decisions and
   * answers go to it) and the agents from the session's down to it (`lead › researcher`);
   * `background` when it is a background sub-agent's, whose turn may have ended meanwhile.
   */
  agent?: { turnId: string; path: string[]; background?: true };
};

/** A turn sleeping in a `wait` call: the call, until when (ISO 8601) and why. `harness wake` ends it early. */
export interface Sleeping {
  callId: string;
  until: string;
  reason: string;
}

/**
 * A background sub-agent of the session still running: its turn, the agents from the session's
 * down to it, whether it waits on a person (its wait is then the session's `pending` while no
 * turn waits), and its step (read from its own history by the client, not by the session).
 */
export interface BackgroundChild {
  turnId: string;
  path: string[];
  waiting?: true;
  step?: number;
}

/** Answer of the `state` query. */
export interface SessionState {
  sessionId: string;
  status: SessionStatus;
  turnCount: number;
  currentTurnId?: string;
  pending?: Pending;
  /** The current turn sleeps (a `wait` call): the status stays `running`. */
  sleeping?: Sleeping;
  usage: Usage;
  memory: Record<string, string>;
  messageCount: number;
  model: string;
  lastTurn?: { turnId: string; terminated_by: TerminatedBy; answer: string; steps: number };
  /** A forked session: the turn and step it comes from, the files put back in its workspace, what could not be. */
  fork?: { from: string; step: number; restored: string[]; problems: string[]; seeded?: number };
  /** A rerun: how its first turn compared with the record (once it finished). */
  rerun?: RerunReport;
  /** The session's MCP servers as discovery found them. */
  mcp?: McpServerStatus[];
  /** How the model is offered the tools (native or text) and why, once a turn decided it. */
  toolMode?: ToolModeDecision;
  /** What the session spent so far (sessions from before prices: absent). */
  spend?: Spend;
  /** The sandbox host the session lives on (workers with a host id; deterministic/host.ts). */
  host?: string;
  /** Background sub-agents still running (none: absent). */
  background?: BackgroundChild[];
}

/** Answer of a turn's own `turnState` query. */
export interface TurnState {
  turnId: string;
  status: 'running' | 'waiting_for_user' | 'waiting_for_approval' | 'waiting_for_budget' | 'done';
  step: number;
  pending?: Pending;
  /** Sleeping in a `wait` call (the status stays `running`). */
  sleeping?: Sleeping;
  /** Messages sent to the turn while it runs, not yet given to its model (they are at its next step). */
  queued?: number;
}
