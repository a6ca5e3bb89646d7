/**
 * One model call in a tool mode, with its corrections. Native: the tools go in the `tools` field.
 * Text: they are described in the system message, the reply is constrained to the envelope where
 * the endpoint takes a JSON schema, and read tolerantly (text-tools/parse.ts). A reply that cannot
 * be used — malformed in text mode, cut at the output cap, empty — gets a short correction and
 * another try, at most MAX_CORRECTIONS times; the corrections are part of the reply (history, the
 * trace). Past the bound a malformed reply becomes a call marked `invalid` (the workflow answers
 * INVALID_TOOL_CALL, which the model reads) and a cut one says it was cut: never silent.
 */
import OpenAI from 'openai';
import type { ModelCorrection } from '../../deterministic/activity-types';
import type { ToolMode } from '../../deterministic/tool-mode';
import type { ChatMessage, ToolCall, Usage } from '../../deterministic/types';
import { addUsage } from '../../deterministic/usage';
import type { ModelAnswer, ModelClient, ModelRequest } from './client';
import { parseTextReply, salvageCalls } from '../text-tools/parse';
import { correctionText, textModeMessages } from '../text-tools/render';
import { envelopeFormat } from '../text-tools/schema';
// A correction's request says which it is (the scripted model answers it from the step's `corrected`).
import { CORRECTION_HEADER } from '../../scripted-model/protocol';

/** Corrections one model call may get before what the model wrote is taken as it is. */
export const MAX_CORRECTIONS = 2;
/** A correction quotes this much of the reply back (history keeps this much of it too). */
const QUOTED_CHARS = 2_000;

/** How to call: the mode, and in text mode whether to constrain the reply. */
interface ExchangeMode {
  mode: ToolMode;
  constrained?: boolean;
}

/** What an exchange gives back: the answer to use, the corrections it took, and whether the constraint held. */
export interface Exchanged {
  answer: ModelAnswer;
  corrections: ModelCorrection[];
  /** Text mode: whether the reply was constrained (false after the endpoint refused the schema). */
  constrained?: boolean;
  truncated?: boolean;
}

type Verdict = { ok: true; answer: ModelAnswer; truncated?: boolean } | { ok: false; problem: string; name?: string };

/** Runs the call in `how`, correcting what cannot be used. `onUnconstrained` hears that the endpoint refused the schema. */
export async function exchange(client: ModelClient, req: ModelRequest, how: ExchangeMode, onUnconstrained?: () => void): Promise<Exchanged> {
  const text = how.mode === 'text';
  const known = new Set(req.tools.map((t) => t.name));
  const base = text ? textModeMessages(req.messages, req.tools) : req.messages;
  let constrained = text && how.constrained === true;
  const extra: ChatMessage[] = [];
  const corrections: ModelCorrection[] = [];
  let usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let estimated = false;
  const reasoning: string[] = [];
  let refused = false;
  for (let round = 0; ; round++) {
    let answer: ModelAnswer;
    try {
      answer = await client.complete({
        ...req,
        messages: [...base, ...extra],
        tools: text ? [] : req.tools,
        headers: { ...req.headers, ...(round ? { [CORRECTION_HEADER]: String(round) } : {}) },
        ...(constrained ? { responseFormat: envelopeFormat(req.tools) } : {}),
      });
    } catch (err) {
      // A server that cannot take the schema (no grammar support, a schema it cannot convert)
      // still takes the call without it: the tolerant parser does the rest.
      if (!constrained || !refusedSchema(err)) throw err;
      constrained = false;
      refused = true;
      round--;
      continue;
    }
    // Only once the call went through without the schema was it the schema that was refused.
    if (refused) {
      refused = false;
      onUnconstrained?.();
    }
    usage = sum(usage, answer.usage);
    estimated ||= answer.usageEstimated === true;
    if (answer.reasoning) reasoning.push(answer.reasoning);
    const verdict = text ? readText(answer, known, req.maxOutputTokens) : readNative(answer, req.maxOutputTokens);
    const last = round >= MAX_CORRECTIONS;
    if (verdict.ok || last) {
      const final = verdict.ok ? verdict : giveUp(answer, verdict, text, req.maxOutputTokens);
      const { usageEstimated: _estimated, reasoning: _reasoning, ...rest } = final.answer;
      return {
        answer: {
          ...rest,
          usage,
          ...(estimated ? { usageEstimated: true } : {}),
          ...(reasoning.length ? { reasoning: reasoning.join('\n\n') } : {}),
        },
        corrections,
        ...(text ? { constrained } : {}),
        ...(final.truncated ? { truncated: true } : {}),
      };
    }
    const written = quote(answer);
    // What the corrected attempt used: the ledger counts corrections under their own heading.
    corrections.push({ problem: verdict.problem, reply: written.slice(0, 300), usage: answer.usage });
    extra.push({ role: 'assistant', content: written }, { role: 'user', content: text ? correctionText(verdict.problem) : nativeCorrection(verdict.problem) });
  }
}

/** A text-mode reply: the calls or answer it holds, or what is wrong with it. */
function readText(answer: ModelAnswer, known: ReadonlySet<string>, cap: number | undefined): Verdict {
  // A server that parsed the calls itself (its template knows tools after all): take them.
  if (answer.toolCalls.length) return { ok: true, answer };
  const content = typeof answer.content === 'string' ? answer.content : '';
  const read = parseTextReply(content, known);
  const cut = answer.finishReason === 'length';
  if (read.kind === 'calls') {
    const calls: ToolCall[] = read.calls.map((c) => ({ id: '', name: c.name, arguments: c.arguments }));
    return { ok: true, answer: { ...answer, content: read.text, toolCalls: calls } };
  }
  // Cut in the middle of its calls: the ones written whole run (a small model often writes a
  // call, then the same call again until the cap).
  const whole = cut ? salvageCalls(content, known) : [];
  if (whole.length) return { ok: true, truncated: true, answer: { ...answer, content: null, toolCalls: whole.map((c) => ({ id: '', name: c.name, arguments: c.arguments })) } };
  if (cut) return { ok: false, problem: cutProblem(cap), ...(read.kind === 'malformed' && read.name ? { name: read.name } : {}) };
  if (read.kind === 'answer') return { ok: true, answer: { ...answer, content: read.text } };
  return { ok: false, problem: read.problem, ...(read.name ? { name: read.name } : {}) };
}

/** A native reply: usable unless it is empty or an answer cut at the cap (cut calls go on: the workflow names their bad arguments). */
function readNative(answer: ModelAnswer, cap: number | undefined): Verdict {
  const content = typeof answer.content === 'string' ? answer.content : answer.content === null ? '' : 'x';
  if (answer.toolCalls.length) return { ok: true, answer, ...(answer.finishReason === 'length' ? { truncated: true } : {}) };
  if (answer.finishReason === 'length') return { ok: false, problem: cutProblem(cap) };
  if (content.trim() === '') return { ok: false, problem: 'the reply was empty' };
  return { ok: true, answer };
}

/** The reply as it stands once the corrections are used up: a marked call, or text that says it was cut. */
function giveUp(answer: ModelAnswer, verdict: Extract<Verdict, { ok: false }>, text: boolean, cap: number | undefined): { answer: ModelAnswer; truncated?: boolean } {
  const written = quote(answer);
  const cut = answer.finishReason === 'length';
  // A call cut off or malformed is a call that failed (the model reads why), not an answer.
  const triedCall = text && written.trim() !== '' && (!cut || parseTextReply(written).kind !== 'answer');
  if (triedCall) {
    const call: ToolCall = { id: '', name: verdict.name ?? 'unreadable_call', arguments: written, invalid: verdict.problem };
    return { answer: { ...answer, content: written, toolCalls: [call] } };
  }
  if (cut) return { answer: { ...answer, content: `${written}\n\n[The reply was cut off at the output limit (${cap ?? 'the provider\u2019s'} tokens).]` }, truncated: true };
  return { answer: { ...answer, content: written } };
}

function cutProblem(cap: number | undefined): string {
  return `the reply was cut off at the output limit${cap ? ` of ${cap} tokens` : ''}; say it in fewer words`;
}

function nativeCorrection(problem: string): string {
  return `Your last reply could not be used: ${problem}. Reply again: call a tool, or give your answer.`;
}

/** The reply's text as the model wrote it, bounded (what a correction quotes back). */
function quote(answer: ModelAnswer): string {
  const text = typeof answer.content === 'string' ? answer.content : answer.content === null ? '' : JSON.stringify(answer.content) ?? '';
  return text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text;
}

/** Whether a failure is the endpoint refusing the JSON schema (rather than the call). */
export function refusedSchema(err: unknown): boolean {
  if (!(err instanceof OpenAI.APIError) || typeof err.status !== 'number') return false;
  if (err.status === 400 || err.status === 422) return true;
  return err.status === 500 && /schema|grammar|response_format/i.test(err.message);
}

function sum(a: Usage, b: Usage): Usage {
  return addUsage(a, b); // cached prompt tokens included
}
