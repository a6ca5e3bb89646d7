/** What `harness cancel` does (cli/commands/cancel.ts defines the command and loads this when it runs). */
import type { Cancelled } from '../../client/cancel';
import type { CliContext } from '../context';
import { isAgentTurnId } from '../../deterministic/turn-id';
import { printJson, say } from '../output';

export interface CancelFlags {
  json?: boolean;
  wait: boolean;
  waitTimeout: number;
}

export async function cancel(ctx: CliContext, id: string, o: CancelFlags): Promise<void> {
  const harness = await ctx.harness();
  const done = await harness.cancel(id, { wait: o.wait, timeoutMs: o.waitTimeout * 1000 });
  // Words on stderr; with --json, stdout holds one object.
  for (const line of words(done)) say(line);
  if (o.json) {
    printJson({
      kind: done.kind,
      session_id: done.sessionId,
      ...(done.turnId ? { turn_id: done.turnId } : {}),
      ...(done.terminatedBy ? { terminated_by: done.terminatedBy } : {}),
      ...(done.requested ? { requested: true } : {}),
    });
  }
}

/** What happened, for a person. */
function words(c: Cancelled): string[] {
  const turn = c.turnId ? turnWords(c.turnId, c.terminatedBy, c.requested) : undefined;
  // A sub-agent's turn: its parent takes the call's failure (or, started in the background, its session the end).
  if (c.kind === 'turn') return [turn!, ...(c.requested || isAgentTurnId(c.turnId!) ? [] : [`session ${c.sessionId} takes the next message`])];
  if (c.requested) return [`session ${c.sessionId} asked to end${turn ? `; ${turn}` : ''}`];
  return [...(turn ? [turn] : []), `session ${c.sessionId} ended`];
}

function turnWords(turnId: string, how: string | undefined, requested: true | undefined): string {
  if (requested) return `turn ${turnId} asked to stop`;
  if (how === 'cancelled') return `turn ${turnId} cancelled`;
  return `turn ${turnId} finished before the cancellation reached it (${how ?? 'unknown'})`;
}
