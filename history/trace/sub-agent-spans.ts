/**
 * Sub-agents in a trace: a turn's call of `agent__<name>` started a child turn workflow
 * (`<turnId>/agent-<callId>`, workflows/turn/sub-agent.ts), whose spans are the turn's too, nested
 * under the call that started it: the child's turn span is a child of that tool_call span, so
 * `harness trace` and the OTLP export show the sub-agent's steps inside the parent's call.
 */
import { parseSubAgentTurnId } from '../../deterministic/turn-id';
import { HistoryBatchTooLarge } from '../read-history';
import type { Run } from './runs';
import type { BuiltSpan } from './types';

/**
 * Adds the spans of the child turns `runs` started to `spans`, each child's turn span under its
 * call's span. `load` builds a child's spans (its own children included); `fetch` reads its runs.
 */
export async function addSubAgentSpans(
  spans: BuiltSpan[],
  turnId: string,
  runs: readonly Run[],
  fetch: (workflowId: string) => Promise<Run[]>,
  load: (childId: string, childRuns: Run[]) => Promise<BuiltSpan[]>,
  notes: string[],
): Promise<void> {
  const children: Array<{ id: string; callId: string }> = [];
  for (const run of runs) {
    for (const e of run.events) {
      if (e.kind !== 'childStarted') continue;
      const parsed = parseSubAgentTurnId(e.workflowId);
      if (parsed?.parentTurnId === turnId && !children.some((c) => c.id === e.workflowId)) children.push({ id: e.workflowId, callId: parsed.callId });
    }
  }
  for (const child of children) {
    let childRuns: Run[];
    try {
      childRuns = await fetch(child.id);
    } catch (err) {
      if (!(err instanceof HistoryBatchTooLarge)) throw err;
      notes.push(`${err.message}; not shown`);
      continue;
    }
    if (!childRuns.length) {
      notes.push(`sub-agent turn ${child.id}: its history is gone (past Temporal's retention)`);
      continue;
    }
    const call = spans.find((s) => s.span.type === 'tool_call' && s.span.input.call_id === child.callId);
    const built = await load(child.id, childRuns);
    for (const b of built) if (b.span.parent_id === null && call) b.span.parent_id = call.span.span_id;
    spans.push(...built);
  }
}
