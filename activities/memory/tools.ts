/**
 * The `remember_longterm` and `recall` tools over a MemoryStore. A database that is down is
 * a recoverable tool error the model sees (the turn goes on), never a thrown failure.
 */
import { z } from 'zod';
import { toolError, toolOk } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';
import { MemoryUnavailableError, unavailableMessage } from './errors';
import type { MemoryStore } from './store';

/** Parameters of `remember_longterm`. */
export const rememberLongtermParams = z.object({
  text: z.string().min(1).max(4000).describe('the fact, decision or preference to keep across sessions, self-contained'),
});

/** Parameters of `recall`. */
export const recallParams = z.object({
  query: z.string().min(1).describe('what to look for: keywords or a short phrase, any language'),
  top_k: z.number().int().positive().max(50).optional().describe('how many memories to return (default 5)'),
});

/** Where a memory call belongs: the namespace isolates users, projects and eval cases. */
interface MemoryScope {
  namespace: string;
  sessionId?: string;
  /** Names the tool call (`<turnId>/<callId>`) so a retried write is stored once. */
  requestKey?: string;
}

/** MEMORY_UNAVAILABLE for any failure to reach or open the memory database; one line, prefix once. */
export function memoryUnavailable(err: unknown, action = 'try'): ToolResult {
  return toolError('MEMORY_UNAVAILABLE', unavailableMessage(err), {
    recoverable: true,
    suggestion: `long-term memory is unavailable; continue without it, or ${action} again later`,
  });
}

function failure(err: unknown, action: string): ToolResult {
  if (err instanceof MemoryUnavailableError) return memoryUnavailable(err, action);
  // A query bug is not something the model can fix by retrying.
  const message = err instanceof Error ? err.message : String(err);
  return toolError('EXECUTION_ERROR', `memory ${action} failed: ${message.split('\n')[0]}`, { recoverable: false });
}

/** Stores text in long-term memory under the scope's namespace and session. */
export async function rememberLongterm(store: MemoryStore, scope: MemoryScope, args: z.infer<typeof rememberLongtermParams>): Promise<ToolResult> {
  try {
    const { id } = await store.remember(scope.namespace, scope.sessionId ?? null, args.text, scope.requestKey ? { requestKey: scope.requestKey } : {});
    return toolOk({ id, stored: true });
  } catch (err) {
    return failure(err, 'remember');
  }
}

/** Finds the most relevant (and recent) memories of the scope's namespace. */
export async function recall(store: MemoryStore, scope: Pick<MemoryScope, 'namespace'>, args: z.infer<typeof recallParams>): Promise<ToolResult> {
  try {
    const rows = await store.recall(scope.namespace, args.query, args.top_k ?? 5);
    return toolOk({
      memories: rows.map((m) => ({ id: m.id, text: m.text, created_at: m.created_at.toISOString(), score: Math.round(m.score * 1000) / 1000 })),
    });
  } catch (err) {
    return failure(err, 'recall');
  }
}
