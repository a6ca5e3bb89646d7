/**
 * How a model is offered the tools: `native` (the chat-completions `tools` field, the model
 * answers with `tool_calls`) or `text` (the tools described in the system message, the model
 * answers with a JSON envelope the model activity parses). `auto` asks the endpoint once (a
 * probe, cached on the worker) and records the decision in the turn's history, so replay, later
 * turns and forks use the mode that was chosen, never a new guess. Pure: the workflow uses it.
 */

/** A mode the model activity runs. */
export type ToolMode = 'native' | 'text';

/** What a config may ask for. */
export type ToolModeSetting = ToolMode | 'auto';

/** The modes a config may name (for validation and messages). */
export const TOOL_MODE_SETTINGS: readonly ToolModeSetting[] = ['auto', 'native', 'text'];

/** The mode a turn runs with, and why: recorded in history (turn result, session state, model replies). */
export interface ToolModeDecision {
  mode: ToolMode;
  /** Text mode: whether replies are constrained to the envelope by a JSON schema (`response_format`). */
  constrained?: boolean;
  /** `configured`: the config named the mode; `probe`: auto asked the endpoint; `scripted`: the scripted model (native unless configured). */
  source: 'configured' | 'probe' | 'scripted';
  /** One line a person reads in `harness status` and the trace. */
  reason: string;
}

/**
 * The decision a turn can make without asking the endpoint, or undefined when it must probe: a
 * mode named in the config, a decision the session already carries, or the scripted model
 * (which supports native calls) left on auto.
 */
export function decidedToolMode(
  model: { provider: 'openai' | 'scripted'; toolMode?: ToolModeSetting },
  carried: ToolModeDecision | undefined,
): ToolModeDecision | undefined {
  const asked = model.toolMode ?? 'auto';
  if (asked !== 'auto') {
    // A carried decision for the same mode keeps its detail (whether replies are constrained).
    if (carried?.mode === asked) return carried;
    return { mode: asked, source: 'configured', reason: `toolMode ${asked} in the session's config` };
  }
  if (carried) return carried;
  if (model.provider === 'scripted') return { mode: 'native', source: 'scripted', reason: 'the scripted model answers tool calls natively' };
  return undefined;
}

/** One line for a person: `text (JSON-schema constrained; probe: …)`. */
export function describeToolMode(d: ToolModeDecision): string {
  // A configured text mode was never probed: each call tries the schema (its reply says whether it held).
  const detail = d.mode === 'text' && d.constrained !== undefined ? (d.constrained ? 'JSON-schema constrained; ' : 'unconstrained; ') : '';
  return `${d.mode} (${detail}${d.source}: ${d.reason})`;
}
