/**
 * The scripted model's answers to the requests the harness makes besides a step's call: the
 * tool-mode probe (`auto` asking whether the endpoint takes native tool calls, which the scripted
 * model does) and corrections of a reply (text mode, a cut or empty reply), answered from the
 * step's `corrected` replies. Neither uses up a step, so a script reads the same in any mode.
 */
import type { ScriptStep } from './script';

type Json = Record<string, unknown>;

/** Header of a correction's request: its number within the call (1, 2, …). */
export const CORRECTION_HEADER = 'x-harness-correction';
/** Purpose header value of the probe's requests. */
export const PROBE_PURPOSE = 'probe';

/** The probe's answer: a native call of the first tool offered, or a JSON answer when none is. */
export function probeCompletion(body: Json): Json {
  const tools = Array.isArray(body.tools) ? (body.tools as { function?: { name?: unknown } }[]) : [];
  const name = tools[0]?.function?.name;
  const message: Json =
    typeof name === 'string'
      ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_probe', type: 'function', function: { name, arguments: '{}' } }] }
      : { role: 'assistant', content: '{"answer": "ok"}' };
  return {
    id: 'chatcmpl-scripted-probe',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : 'scripted',
    choices: [{ index: 0, message, finish_reason: typeof name === 'string' ? 'tool_calls' : 'stop', logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

/** What a step answers to its `n`th correction: its `corrected` reply, else the step again. */
export function correctedReply(step: ScriptStep, n: number): Pick<ScriptStep, 'content' | 'tool_calls'> {
  return step.corrected?.[n - 1] ?? step;
}
