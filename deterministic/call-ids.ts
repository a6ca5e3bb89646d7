/** The harness's own ids for the tool calls of a model reply. Pure: workflow and activities use it alike. */
import type { ToolCall } from './types';

/**
 * The harness's own call ids: `t<turn>-s<step>-c<index>`, unique within a session, so a
 * decision or answer for one call can never be taken for another (providers may send no id, or
 * the same id every step). The provider's id is kept for the provider when it is usable: present
 * and not repeated within the reply.
 */
export function assignCallIds(calls: readonly ToolCall[], turn: number, step: number): ToolCall[] {
  return withCallIds(calls, `t${turn}-s${step}`);
}

/** The same, with the id prefix (`t<turn>-s<step>`) given. */
export function withCallIds(calls: readonly ToolCall[], prefix: string): ToolCall[] {
  const seen = new Map<string, number>();
  for (const c of calls) if (c.id) seen.set(c.id, (seen.get(c.id) ?? 0) + 1);
  return calls.map((c, i) => ({
    id: `${prefix}-c${i}`,
    name: c.name,
    arguments: c.arguments,
    ...(c.id && seen.get(c.id) === 1 ? { providerId: c.id } : {}),
    // A text-mode reply that could not be read (the workflow answers it with INVALID_TOOL_CALL).
    ...(typeof c.invalid === 'string' ? { invalid: c.invalid } : {}),
  }));
}

