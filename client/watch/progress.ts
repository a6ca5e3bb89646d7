/**
 * Where a running turn is, from its history: the step it is at, the call it is making or the
 * person it waits for, and the tokens its model calls used so far (the session's own usage
 * counts finished turns only). `harness status` shows it for the current turn.
 */
import type { Client } from '@temporalio/client';
import type { Usage } from '../../deterministic/types';
import { fetchRuns } from '../../history/trace/runs';
import { sessionOfTurnId } from '../../deterministic/turn-id';
import type { Span } from '../../history/trace/types';

/** A running turn's progress. */
export interface TurnProgress {
  turn_id: string;
  step: number;
  /** What runs now: `model call`, `tool run_shell`, `waiting for approval of …` (undefined between calls). */
  current?: string;
  /** Since when (ISO 8601) the current call runs. */
  current_since?: string;
  model_calls: number;
  tool_calls: number;
  /** Tokens of this turn's finished model calls. */
  usage: Usage;
}

/** The progress of a turn, or undefined when Temporal does not know it. */
export async function turnProgress(client: Client, turnId: string): Promise<TurnProgress | undefined> {
  const runs = await fetchRuns(client, turnId);
  if (!runs.length) return undefined;
  // Loaded here: the watch code is a good part of a CLI start-up, and `status` of an idle session
  // (which imports this module) never needs it.
  const { liveTurnSpans } = await import('./live');
  return progressOf(turnId, liveTurnSpans(turnId, runs, sessionOfTurnId(turnId)).map((b) => b.span));
}

/** The progress the spans of a turn tell. */
function progressOf(turnId: string, spans: readonly Span[]): TurnProgress {
  const usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let step = 0;
  let models = 0;
  let tools = 0;
  for (const s of spans) {
    if (s.type === 'step') step = Math.max(step, Number(s.input.step) || 0);
    if (s.type === 'llm_call' && s.status !== 'running') {
      models++;
      const u = (s.output as { usage?: Usage } | null)?.usage;
      if (u) {
        usage.prompt_tokens += u.prompt_tokens;
        usage.completion_tokens += u.completion_tokens;
        usage.total_tokens += u.total_tokens;
      }
    }
    if (s.type === 'tool_call' && s.status !== 'running') tools++;
  }
  // The innermost running span is what happens now (a wait under its call, a call under its step).
  const running = [...spans].reverse().find((s) => s.status === 'running' && s.type !== 'turn' && s.type !== 'step');
  const out: TurnProgress = { turn_id: turnId, step, model_calls: models, tool_calls: tools, usage };
  if (running) {
    out.current = describe(running);
    if (running.start) out.current_since = running.start;
  }
  return out;
}

function describe(s: Span): string {
  const input = s.input as Record<string, unknown>;
  const out = (s.output ?? {}) as Record<string, unknown>;
  switch (s.type) {
    case 'llm_call':
      return `model call${Number(out.attempts) > 1 ? ` (attempt ${String(out.attempts)}${out.last_failure ? `; last failure: ${String(out.last_failure)}` : ''})` : ''}`;
    case 'tool_call': {
      const args = (input.args ?? {}) as Record<string, unknown>;
      const what = typeof args.command === 'string' ? args.command : typeof args.path === 'string' ? args.path : '';
      return `tool ${s.name}${what ? ` ${what}` : ''}`;
    }
    case 'approval':
      return `waiting for approval of ${String(input.tool ?? s.name)}`;
    case 'ask_user':
      return 'waiting for an answer';
    case 'budget':
      return 'waiting for a budget decision';
    case 'wait':
      return `sleeping until ${String(input.until ?? '')}`;
    case 'compress':
      return 'compressing the context';
    default:
      return s.name;
  }
}
