/**
 * A session's background sub-agents as `status` shows them: those still running, each with the
 * step its own turn is at, read from that turn's history (no worker needed, and the session
 * itself does not know its children's steps).
 *
 * The session learns of them from signals, which anyone who can reach the Temporal server can
 * send. So a child is shown only when Temporal has it: a turn of this session that is running,
 * with the agent path its starter gave it (its memo), not the one a signal claims.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { BackgroundChild } from '../deterministic/session-state';
import { parseAgentTurnId } from '../deterministic/turn-id';

/** The children of `sessionId` Temporal has running, with their steps (a child whose history cannot be read is shown without one). */
export async function withSteps(client: Client, sessionId: string, children: readonly BackgroundChild[] | undefined): Promise<BackgroundChild[] | undefined> {
  if (!children?.length) return undefined;
  const { turnProgress } = await import('./watch/progress');
  const shown = await Promise.all(
    children.map(async (c): Promise<BackgroundChild | undefined> => {
      if (parseAgentTurnId(c.turnId, { strict: true })?.sessionId !== sessionId) return undefined;
      // Not found, not a turn or not running: not shown. The server not answering: shown as the session knows it.
      const d = await client.workflow
        .getHandle(c.turnId)
        .describe()
        .catch((err: unknown) => (err instanceof WorkflowNotFoundError ? null : undefined));
      if (d === null || (d && (d.type !== 'turnWorkflow' || d.status.name !== 'RUNNING'))) return undefined;
      const path = d?.memo?.agentPath;
      const real = Array.isArray(path) && path.every((p) => typeof p === 'string') ? { ...c, path: path as string[] } : c;
      const p = await turnProgress(client, c.turnId).catch(() => undefined);
      return p && p.step > 0 ? { ...real, step: p.step } : real;
    }),
  );
  const running = shown.filter((c): c is BackgroundChild => c !== undefined);
  return running.length ? running : undefined;
}

/** `1 background sub-agent running: researcher (s-1/turn-1/agent-t1-s1-c0), step 2`; nothing when none runs without waiting on a person. */
export function backgroundLine(children: readonly BackgroundChild[] | undefined): string | undefined {
  const running = (children ?? []).filter((c) => !c.waiting);
  if (!running.length) return undefined;
  const each = running.map((c) => `${c.path[c.path.length - 1] ?? 'sub-agent'} (${c.turnId})${c.step ? `, step ${c.step}` : ''}`);
  return `${running.length} background sub-agent${running.length === 1 ? '' : 's'} running: ${each.join('; ')}`;
}
