/**
 * A sub-agent's waits among its parent turn's events: when a child turn waits for a person, the
 * parent tells its session (the turnStatus signal, with the child and its path of agents), and
 * that is in the parent's history. Each such wait is an `approval_needed` (one per call) or
 * `question_asked` event of the parent, carrying `agent` (the child turn that waits and the path,
 * `lead › researcher`): an app following the parent turn learns that someone must decide, and the
 * ids to decide with (approve, deny or answer at the session, which hands it to the child). How it
 * was decided is in the child turn's own events.
 */
import type { Timeline } from '../../history/trace/timeline';
import type { ApprovalNeededEvent, EventBase, QuestionAskedEvent } from './event-types';

type Draft<E> = Omit<E, keyof EventBase>;

/** The events of the child waits the timeline holds, each with the key it is given once under. */
export function subAgentWaitDrafts(t: Timeline): Array<{ key: string; draft: Draft<ApprovalNeededEvent> | Draft<QuestionAskedEvent> }> {
  const out: Array<{ key: string; draft: Draft<ApprovalNeededEvent> | Draft<QuestionAskedEvent> }> = [];
  for (const w of t.waits) {
    const p = w.pending;
    if (!p.agent) continue;
    const agent = { turnId: p.agent.turnId, path: [...p.agent.path] };
    if (p.kind === 'approvals') {
      for (const c of p.calls) {
        out.push({
          key: `agent approval ${agent.turnId} ${c.callId}`,
          draft: { type: 'approval_needed', callId: c.callId, tool: c.tool, args: c.args, risk: c.risk, reason: c.reason, ...(c.rule ? { rule: c.rule } : {}), ...(c.digest ? { digest: c.digest } : {}), agent },
        });
      }
    } else if (p.kind === 'question') {
      out.push({ key: `agent question ${agent.turnId} ${p.callId}`, draft: { type: 'question_asked', questionId: p.callId, callId: p.callId, question: p.question, agent } });
    }
  }
  return out;
}
