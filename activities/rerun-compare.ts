/**
 * compareRerun: where a rerun first went another way than its record. Both conversations are
 * read from the store (whole tool results, not the previews history holds) and walked message by
 * message after the fork point: the calls each reply made, then each call's result. Fields that
 * differ on every run (a duration, the current time) are left out of the comparison.
 */
import type { PendingMessage } from '../deterministic/conversation';
import type { RerunReport } from '../deterministic/fork';
import type { ChatMessage } from '../deterministic/types';
import type { Conversations } from './store/conversations';
import { withStore } from './store/errors';

export interface CompareRerunInput {
  recorded: { sessionId: string; conversation: { head: string | null; pending: PendingMessage[] } };
  rerun: { sessionId: string; conversation: { head: string | null; pending: PendingMessage[] } };
  /** Messages before the fork point (the same in both). */
  from: number;
}

/** Result fields that differ on every run, by tool (`*`: every tool). */
const VOLATILE: Record<string, string[]> = {
  '*': ['duration_ms'],
  get_current_time: ['iso', 'unix_ms', 'local', 'weekday'],
};

export function createCompareRerun(conversations: Conversations) {
  return async function compareRerun(input: CompareRerunInput): Promise<RerunReport> {
    const read = (side: CompareRerunInput['recorded']) => withStore(() => conversations.read(side.sessionId, side.conversation));
    const recorded = (await read(input.recorded)).slice(input.from);
    const now = (await read(input.rerun)).slice(input.from);
    return compareMessages(recorded, now);
  };
}

/** The first difference of two conversations after the fork point (pure; tested on its own). */
export function compareMessages(recorded: ChatMessage[], now: ChatMessage[]): RerunReport {
  let step = 0;
  let compared = 0;
  const names = new Map<string, string>();
  const diverged = (first: NonNullable<RerunReport['first']>): RerunReport => ({ compared, diverged: true, first });
  for (let i = 0; i < Math.max(recorded.length, now.length); i++) {
    const a = recorded[i];
    const b = now[i];
    if (a?.role === 'assistant') step++;
    if (!a || !b) {
      const which = a ? 'the rerun stopped here' : 'the rerun went on past the record';
      return diverged({ step: Math.max(step, 1), what: which, recorded: a ? brief(a) : '(end)', now: b ? brief(b) : '(end)' });
    }
    if (a.role !== b.role) return diverged({ step, what: 'a different message', recorded: brief(a), now: brief(b) });
    if (a.role === 'assistant' && b.role === 'assistant') {
      const ca = (a.tool_calls ?? []).map((c) => `${c.name} ${c.arguments}`);
      const cb = (b.tool_calls ?? []).map((c) => `${c.name} ${c.arguments}`);
      for (const c of a.tool_calls ?? []) names.set(c.id, c.name);
      if (ca.join('\n') !== cb.join('\n')) return diverged({ step, what: 'different tool calls', recorded: ca.join('; ') || '(none)', now: cb.join('; ') || '(none)' });
      continue;
    }
    if (a.role === 'tool' && b.role === 'tool') {
      const tool = names.get(a.tool_call_id) ?? '';
      const ra = comparable(a.content, tool);
      const rb = comparable(b.content, tool);
      if (ra !== rb) return diverged({ step, callId: a.tool_call_id, tool, what: `a different result of ${tool || 'a tool call'}`, recorded: clip(ra), now: clip(rb) });
      compared = step;
      continue;
    }
    if (a.content !== b.content) return diverged({ step, what: `a different ${a.role} message`, recorded: brief(a), now: brief(b) });
  }
  return { compared: step, diverged: false };
}

/** A tool message's result without the fields that differ on every run. */
function comparable(content: string, tool: string): string {
  let r: unknown;
  try {
    r = JSON.parse(content);
  } catch {
    return content;
  }
  const drop = [...(VOLATILE['*'] ?? []), ...(VOLATILE[tool] ?? [])];
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (!v || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).filter(([k]) => !drop.includes(k)).map(([k, x]) => [k, strip(x)]));
  };
  return JSON.stringify(strip(r));
}

function brief(m: ChatMessage): string {
  if (m.role === 'assistant') return clip(m.tool_calls?.length ? m.tool_calls.map((c) => c.name).join(', ') : (m.content ?? ''));
  return clip(m.content);
}

function clip(text: string): string {
  return text.length > 300 ? `${text.slice(0, 297)}…` : text;
}
