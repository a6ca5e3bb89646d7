/**
 * Contracts of `harness fork` and `harness rerun`: where a fork starts from a recorded turn, what
 * preparing it made, the recorded human decisions a rerun applies again, the recorded results it
 * answers calls that leave the sandbox with, and how a rerun compared with its record.
 */
import type { ToolOutcome } from './activity-types';
import type { Rule } from './policy/schema';
import type { BlobArg, ConversationRef, PendingMessage } from './conversation';
import type { McpToolSet } from './mcp';
import type { WorkspaceSnapshot } from './snapshot';

/** One file write a recorded turn made, replayed into a fork's workspace (content as history holds it). */
export interface ForkWrite {
  step: number;
  path: string;
  content: unknown;
  append?: boolean;
}

/**
 * Where a fork starts: the recorded turn's conversation before the model call of `from.step`
 * (read from the source session's store), the turn's state then, and the edits asked for.
 */
export interface ForkSpec {
  from: { sessionId: string; turnId: string; step: number };
  conversation: { head: string | null; pending: PendingMessage[] };
  /** Replaces the text of the conversation's last user message. */
  editMessage?: string;
  /** What the recorded turn wrote with write_file before the step, in order. */
  writes: ForkWrite[];
  userMessage: string;
  memory: Record<string, string>;
  sessionRules: Rule[];
  /** The recorded call index of the step: the fork's model calls are numbered on from it. */
  modelCallBase: number;
  /** Values of the source session's store the fork's config names (a scripted model's script). */
  copyBlobs?: string[];
  /**
   * `harness rerun`: the recorded turn's conversation at its end. Its replies after the fork point
   * become the fork's model (a script), and the fork's turn is compared with it once done.
   */
  replay?: {
    conversation: { head: string | null; pending: PendingMessage[] };
    decisions: RecordedDecision[];
    /**
     * The recorded calls that leave the sandbox (deterministic/effects.ts): the rerun answers them with
     * their recorded results instead of making them. Absent (`rerun --live-effects`, and reruns
     * planned before): they are made, each judged by the policy afresh.
     */
    effects?: EffectCall[];
  };
  /**
   * Seeds the fork's workspace: the recorded turn's starting snapshot (in the store of session
   * `from`), a copy of a session's workspace as it is now (turns recorded before snapshots), or
   * of a folder on the worker's host.
   */
  seed?: { session: string } | { dir: string } | { snapshot: WorkspaceSnapshot; from: string };
  /** The fork's step limit (the recorded turn's own, or `--max-steps`); steps are numbered on from the record. Absent: the config's. */
  maxSteps?: number;
  mcpTools?: McpToolSet;
}

/** What preparing a fork made: its conversation in the fork's own store, and its workspace. */
export interface ForkPrepared {
  conversation: ConversationRef;
  /** Files written into the workspace, with the step that wrote them last. */
  restored: { path: string; step: number }[];
  /** What could not be done (a file that would not write, no user message to edit). */
  problems: string[];
  /** `harness rerun`: the recorded replies as the fork's script (in the fork's store). */
  script?: BlobArg;
  /** Files the seed put in the workspace. */
  seeded?: number;
  /** `harness rerun`: the recorded results of the calls that leave the sandbox, in the fork's store. */
  recordedEffects?: RecordedEffects;
}

/** A recorded call that leaves the sandbox: its id in the record and the id the rerun gives it. */
export interface EffectCall {
  /** The call's id in the recorded turn (`t<turn>-s<step>-c<index>`). */
  recorded: string;
  /** The same call in the rerun's first turn (`t1-s<step>-c<index>`). */
  callId: string;
  tool: string;
}

/**
 * What a rerun answers its calls that leave the sandbox with: the recorded turn, and per call the
 * recorded result as a tool message in the rerun's own store (its verdict and reference). A call
 * with no outcome here, or none listed, is not made (the record does not hold its result).
 */
export interface RecordedEffects {
  from: string;
  calls: { callId: string; tool: string; outcome?: ToolOutcome }[];
}

/** Where a rerun first went another way than its record, compared message by message. */
export interface RerunReport {
  /** Steps whose tool results were compared. */
  compared: number;
  diverged: boolean;
  first?: { step: number; callId?: string; tool?: string; what: string; recorded: string; now: string };
  /** Why the comparison stopped early (a compression rewrote the recorded conversation). */
  note?: string;
}

/** A human decision of a recorded turn: the call by its digest (tool and arguments). */
export interface RecordedDecision {
  digest: string;
  approved: boolean;
  reason?: string;
  /** The recorded turn that decided it. */
  from: string;
}
