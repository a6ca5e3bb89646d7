/**
 * A session's background sub-agents as `status` shows them: those still running, each with the
 * step its own turn is at, read from that turn's history (no worker needed, and the session
 * itself does not know its children's steps).
 */
import type { Client } from '@temporalio/client';
import type { BackgroundChild } from '../deterministic/session-state';

/** The children with their steps (a child whose history cannot be read is shown without one). */
export async function withSteps(client: Client, children: readonly BackgroundChild[] | undefined): Promise<BackgroundChild[] | undefined> {
  if (!children?.length) return undefined;
  const { turnProgress } = await import('./watch/progress');
  return Promise.all(
    children.map(async (c) => {
      const p = await turnProgress(client, c.turnId).catch(() => undefined);
      return p && p.step > 0 ? { ...c, step: p.step } : c;
    }),
  );
}

/** `1 background sub-agent running: researcher (s-1/turn-1/agent-t1-s1-c0), step 2`; nothing when none runs without waiting on a person. */
export function backgroundLine(children: readonly BackgroundChild[] | undefined): string | undefined {
  const running = (children ?? []).filter((c) => !c.waiting);
  if (!running.length) return undefined;
  const each = running.map((c) => `${c.path[c.path.length - 1] ?? 'sub-agent'} (${c.turnId})${c.step ? `, step ${c.step}` : ''}`);
  return `${running.length} background sub-agent${running.length === 1 ? '' : 's'} running: ${each.join('; ')}`;
}
