/** The calls a turn made before one of its steps (what `retry` and `fork` keep from the record). */
import type { BuiltSpan } from './types';

/** The model and tool call spans of the steps before `step`, in order, with their step. */
export function callsBefore(spans: BuiltSpan[], step: number): (BuiltSpan & { step: number })[] {
  const stepOf = new Map<string, number>();
  for (const { span } of spans) if (span.type === 'step') stepOf.set(span.span_id, Number(span.input.step));
  const out: (BuiltSpan & { step: number })[] = [];
  for (const s of spans) {
    if (s.span.type !== 'llm_call' && s.span.type !== 'tool_call') continue;
    const at = s.span.parent_id ? stepOf.get(s.span.parent_id) : undefined;
    if (at !== undefined && at < step) out.push({ ...s, step: at });
  }
  return out;
}
