/** What history keeps of how a model call went, beside its answer. */
import type { ModelReply } from '../../deterministic/activity-types';
import type { ToolModeDecision } from '../../deterministic/tool-mode';
import type { Exchanged } from './exchange';

/** A reasoning model's thinking is kept in history up to this many characters (the trace shows it). */
const MAX_REASONING_CHARS = 4_000;

/** What history keeps of how the call went beyond its answer: the mode, corrections, a cut, estimated usage, reasoning. */
export function replyNotes(done: Exchanged, mode: ToolModeDecision | undefined, decided: ToolModeDecision | undefined): Partial<ModelReply> {
  const a = done.answer;
  const reasoning = typeof a.reasoning === 'string' ? a.reasoning.slice(0, MAX_REASONING_CHARS) : undefined;
  return {
    ...(mode
      ? {
          protocol: {
            mode: mode.mode,
            ...(done.constrained !== undefined ? { constrained: done.constrained } : {}),
            ...(decided ? { decided } : {}),
            ...(done.corrections.length ? { corrections: done.corrections } : {}),
          },
        }
      : done.corrections.length
        ? { protocol: { mode: 'native' as const, corrections: done.corrections } }
        : {}),
    ...(done.truncated ? { truncated: true } : {}),
    ...(a.usageEstimated ? { usageEstimated: true } : {}),
    ...(reasoning ? { reasoning } : {}),
  };
}
