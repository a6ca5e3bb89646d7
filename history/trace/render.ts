/**
 * A trace for a person at a terminal: per turn a header, per step a line with its duration,
 * then the model call (attempts, tokens, the calls it asked for or its answer), the compression,
 * and each tool call with the policy's decision, the approval (who, when) and its outcome.
 * `full` adds the payloads under each line. Everything the model, the tools or a person wrote goes
 * through the caller's escaper first (one line unless the payload has lines), and the result is
 * Text (machine/terminal/text): colours are our own Controls, only when asked for (a TTY).
 */
import type { Trace } from './index';
import type { Span } from './types';
import { plainString, styled, type Style, type Text } from '../../machine/terminal/text';
import { NANO, usdText } from '../../deterministic/pricing';
import { budgetAmount } from '../../deterministic/budget';

/** Shows control and invisible characters as visible escapes (`\e`, `\r`, `\u202e` …). */
export type Escaper = (text: string, opts?: { keepNewlines?: boolean }) => string;

export interface RenderOptions {
  full: boolean;
  color: boolean;
  escape: Escaper;
}

/** The trace as lines of Text for the terminal's writers, colours included when asked for. */
export function traceLines(trace: Trace, opts: RenderOptions): Text[] {
  const paint: Paint = (c, s) => (opts.color && s !== '' ? styled(c, s) : s);
  const format: TerminalFormat = { paint, escape: opts.escape };
  const lines: Text[] = [];
  if (trace.session) {
    const s = trace.session;
    lines.push([paint('bold', `session ${opts.escape(trace.sessionId)}`), `  ${s.status} · ${s.turns} turn${s.turns === 1 ? '' : 's'}${s.runs > 1 ? ` · ${s.runs} runs` : ''}`]);
  }
  const depth = new Map<string, number>();
  for (const { span } of trace.spans) {
    const d = span.parent_id === null ? 0 : (depth.get(span.parent_id) ?? 0) + 1;
    depth.set(span.span_id, d);
    const pad = '  '.repeat(d);
    for (const l of describe(span, format)) lines.push([pad, l]);
    for (const l of details(span, opts.full, format)) lines.push([`${pad}    `, paint('dim', '│'), ' ', l]);
  }
  if (!trace.spans.length) lines.push('no turns yet');
  return lines;
}

/** The trace as plain text (no colours, lines trimmed), ending with a newline. */
export function renderTrace(trace: Trace, opts: RenderOptions): string {
  return `${traceLines(trace, { ...opts, color: false }).map((l) => plainString(l).trimEnd()).join('\n')}\n`;
}

type Paint = (c: Style, s: Text) => Text;

/** How text reaches the terminal: colours, and the escaper for everything from outside. */
interface TerminalFormat {
  paint: Paint;
  escape: Escaper;
}

/** Escaped, on one line, at most `max` characters. */
function clip(format: TerminalFormat, value: unknown, max = 100): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? '';
  const flat = text.replace(/\s+/g, ' ').trim();
  return format.escape(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

function duration(s: Span): string {
  if (s.duration_ms === null) return '';
  return s.duration_ms < 1000 ? `${s.duration_ms}ms` : `${(s.duration_ms / 1000).toFixed(1)}s`;
}

function time(iso: unknown): string {
  return typeof iso === 'string' ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
}

function statusMark(s: Span, paint: Paint): Text {
  return s.status === 'ok' ? paint('green', 'ok') : s.status === 'running' ? paint('yellow', 'running') : paint('red', 'error');
}

/** Pieces with `sep` between them. */
function joined(parts: readonly Text[], sep: string): Text[] {
  return parts.flatMap((p, i) => (i ? [sep, p] : [p]));
}

/** The lines of a span. */
function describe(s: Span, format: TerminalFormat): Text[] {
  const { paint } = format;
  const esc = (t: string) => format.escape(t);
  const out = (s.output ?? {}) as Record<string, unknown>;
  const input = s.input as Record<string, unknown>;
  const dur = paint('dim', duration(s));
  const running = paint('yellow', 'running');
  switch (s.type) {
    case 'turn': {
      const usage = out.usage as { total_tokens?: number } | undefined;
      const how = out.terminated_by ? String(out.terminated_by) : String(out.status ?? '');
      const bits = [how, out.steps !== undefined ? `${out.steps} step${out.steps === 1 ? '' : 's'}` : '', usage ? `${usage.total_tokens} tokens` : '', costText(out.cost), Number(out.runs) > 1 ? `${out.runs} runs` : ''].filter(Boolean);
      const state = s.status === 'running' ? paint('yellow', esc(bits.shift() ?? 'running')) : statusMark(s, paint);
      const head: Text = [paint('bold', `turn ${esc(s.name)}`), '  ', joined([state, ...bits.map(esc)], ' · '), '  ', dur];
      const rest: Text[] = [['  ', paint('dim', 'user:'), ' ', clip(format, input.user_message), input.sent_by ? paint('dim', `  (from ${esc(String(input.sent_by))})`) : '']];
      if (out.pending) rest.push(['  ', paint('yellow', 'waiting:'), ' ', clip(format, pendingText(out.pending))]);
      if (out.answer !== undefined) rest.push(['  ', paint('dim', 'answer:'), ' ', clip(format, out.answer, 200)]);
      if (s.error) rest.push(['  ', paint('red', 'error:'), ' ', clip(format, s.error, 200)]);
      return [head, ...rest];
    }
    case 'step':
      return [[paint('cyan', esc(s.name)), '  ', s.status === 'running' ? running : dur, s.status === 'error' ? ['  ', paint('red', esc(s.error ?? 'error'))] : '']];
    case 'llm_call': {
      const attempts = out.attempts as number | null | undefined;
      const usage = out.usage as { total_tokens?: number; prompt_tokens?: number; completion_tokens?: number } | undefined;
      const calls = (out.tool_calls as { name: string }[] | undefined) ?? [];
      const parts: Text[] = [`model ${esc(s.name)}`];
      if (attempts) parts.push(attempts > 1 ? paint('yellow', `${attempts} attempts`) : '1 attempt');
      if (out.last_failure) parts.push(paint('yellow', `(before: ${clip(format, out.last_failure, 80)})`));
      if (usage) parts.push(`${usage.total_tokens} tokens (${usage.prompt_tokens}+${usage.completion_tokens})${out.usage_estimated ? ' estimated' : ''}`);
      parts.push(...protocolBits(out, paint));
      const cost = costText(out.cost);
      if (cost) parts.push(cost);
      if (s.status === 'ok') parts.push(calls.length ? `→ ${calls.map((c) => esc(c.name)).join(', ')}` : `→ answer: ${clip(format, out.content)}`);
      if (s.status === 'error') parts.push(paint('red', `failed: ${clip(format, s.error, 160)}`));
      if (s.status === 'running') parts.push(running);
      return [[joined(parts, '  '), '  ', dur]];
    }
    case 'compress': {
      if (s.status !== 'ok') return [['compress  ', s.status === 'running' ? running : paint('red', `failed: ${clip(format, s.error)}`)]];
      const what = [`${out.summarized_messages} message(s) summarised`, `${out.compacted_tool_results} result(s) compacted`, Number(out.truncated_messages) ? `${out.truncated_messages} cut` : ''].filter(Boolean);
      return [[`compress  ${out.before_tokens} → ${out.after_tokens} tokens (limit ${out.limit_tokens}; ${what.join(', ')})  `, dur]];
    }
    case 'tool_call': {
      const policy = input.policy as { decision?: string; rule?: string } | undefined;
      const parts: Text[] = [['tool ', paint('bold', esc(s.name)), ` ${clip(format, input.args, 80)}`]];
      if (s.source?.startsWith('mcp:')) parts.push(paint('magenta', `[${esc(s.source)}]`));
      if (policy?.decision) parts.push([policy.decision === 'deny' ? paint('red', 'deny') : policy.decision === 'ask' ? paint('yellow', 'ask') : 'allow', policy.rule ? ` (${esc(policy.rule)})` : '']);
      const exec = out.execution as { kind?: string; attempts?: number; replayed_from?: string } | undefined;
      if (exec?.attempts && exec.attempts > 1) parts.push(paint('yellow', `${exec.attempts} attempts`));
      if (exec?.replayed_from) parts.push(paint('cyan', `replayed from the record of ${esc(exec.replayed_from)} (not made)`));
      // No outcome in history yet: running, or waiting its turn (approvals, earlier calls).
      if (s.status === 'running') parts.push(paint('yellow', 'pending'));
      else if (s.status === 'ok') parts.push(paint('green', 'ok'));
      else if (out.cancelled) parts.push(paint('yellow', 'cancelled (the turn was cancelled before this call finished)'));
      else parts.push(paint('red', clip(format, s.error, 140)));
      return [[joined(parts, '  '), '  ', dur]];
    }
    case 'approval': {
      if (s.status === 'running') return [[paint('yellow', 'approval pending'), input.reason ? `: ${clip(format, input.reason)}` : '']];
      if (out.timed_out) return [['approval ', paint('red', 'timed out'), ': nobody decided in time']];
      if (out.cancelled) return [['approval ', paint('yellow', 'cancelled'), ': the turn was cancelled before anyone decided']];
      const who = out.by ? ` by ${esc(String(out.by))}${out.claimed ? ' (claimed)' : ''}` : '';
      const when = out.at ? ` at ${esc(time(out.at))}` : '';
      const verdict = out.approved ? paint('green', `approved${out.always ? ' (always)' : ''}`) : paint('red', 'denied');
      return [['approval ', verdict, `${who}${when}${out.reason ? `: ${clip(format, out.reason)}` : ''}  `, dur]];
    }
    case 'budget': {
      const what = `budget (${esc(String(input.scope))}): ${fmtBudget(input.unit, input.spent)} spent of ${fmtBudget(input.unit, input.limit)}, next call up to ${fmtBudget(input.unit, input.estimate)}`;
      if (s.status === 'running' || out.decision === 'pending') return [[what, ' → ', paint('yellow', 'waiting for a person')]];
      const who = out.by ? ` by ${esc(String(out.by))}` : '';
      const verdict =
        out.decision === 'raised' ? paint('green', `raised by ${fmtBudget(input.unit, out.raised_by)}`) : out.decision === 'timed_out' ? paint('red', 'nobody decided in time') : paint('red', 'stopped');
      return [[what, ' → ', verdict, `${who}${out.reason ? `: ${clip(format, out.reason)}` : ''}  `, dur]];
    }
    case 'wait': {
      const w = `wait until ${esc(time(input.until))} (${clip(format, input.reason, 80)})`;
      if (s.status === 'running') return [[w, ' → ', paint('yellow', 'sleeping')]];
      if (s.status === 'error') return [[w, ' → ', paint('red', clip(format, s.error))]];
      if (!out.woken) return [[`${w} → slept the whole time  `, dur]];
      const who = out.by ? ` by ${esc(String(out.by))}` : '';
      return [[w, ' → ', paint('cyan', 'woken'), `${who}${out.at ? ` at ${esc(time(out.at))}` : ''}${out.reason ? `: ${clip(format, out.reason)}` : ''}  `, dur]];
    }
    case 'message': {
      const how = input.mode === 'interrupt' ? paint('yellow', 'interrupted the step') : 'queued for the next step';
      return [['message sent while it ran ', `"${clip(format, input.text, 100)}" → `, how]];
    }
    case 'ask_user': {
      const q = `question${s.source ? ` from ${esc(s.source)}` : ''} ${clip(format, input.question, 80)}`;
      if (s.status === 'running') return [[q, ' → ', paint('yellow', 'waiting for an answer')]];
      if (out.timed_out) return [[q, ' → ', paint('red', 'nobody answered in time')]];
      if (out.answer === undefined) return [[q, ' → ', paint('red', clip(format, s.error ?? 'no answer'))]];
      const who = out.by ? ` by ${esc(String(out.by))}` : '';
      const when = out.at ? ` at ${esc(time(out.at))}` : '';
      return [[`${q} → ${clip(format, out.answer, 80)}${who}${when}  `, dur]];
    }
  }
}

/** `text mode (constrained)`, `2 corrections`, `cut at the cap` of a model call. */
function protocolBits(out: Record<string, unknown>, paint: Paint): Text[] {
  const bits: Text[] = [];
  if (out.tool_mode === 'text') bits.push(paint('magenta', `text mode${out.constrained ? ' (constrained)' : ''}`));
  const n = Array.isArray(out.corrections) ? out.corrections.length : 0;
  if (n) bits.push(paint('yellow', `${n} correction${n === 1 ? '' : 's'}`));
  if (out.truncated) bits.push(paint('yellow', 'cut at the output limit'));
  return bits;
}

function pendingText(p: unknown): string {
  const pending = p as { kind?: string; question?: string; calls?: { callId: string; tool: string }[]; scope?: string; unit?: unknown; limit?: unknown };
  if (pending.kind === 'question') return `question: ${pending.question ?? ''}`;
  if (pending.kind === 'budget') return `budget: the ${pending.scope}'s budget of ${fmtBudget(pending.unit, pending.limit)} is reached`;
  return `approval of ${(pending.calls ?? []).map((c) => `${c.callId} ${c.tool}`).join(', ')}`;
}

/** `$0.0123` of a span's cost (its usd, with what failed attempts wasted), or '' when unpriced. */
function costText(cost: unknown): string {
  const c = (cost ?? {}) as { usd?: number | null; wasted_usd?: number | null; retry_waste?: { usd?: number | null } };
  if (typeof c.usd !== 'number') return '';
  const money = (v: number) => usdText(Math.round(v * NANO));
  // A call's waste is on top of its reply; a turn's total already holds its waste.
  if (typeof c.wasted_usd === 'number' && c.wasted_usd > 0) return `${money(c.usd)} (+${money(c.wasted_usd)} on failed attempts)`;
  const waste = c.retry_waste?.usd;
  return `${money(c.usd)}${typeof waste === 'number' && waste > 0 ? ` (${money(waste)} of it on failed attempts)` : ''}`;
}

function fmtBudget(unit: unknown, n: unknown): string {
  return typeof n === 'number' ? budgetAmount(unit === 'usd' ? 'usd' : 'tokens', n) : '?';
}

/** The payload lines shown under a span with --full (escaped, newlines kept as lines). */
function details(s: Span, full: boolean, format: TerminalFormat): string[] {
  if (!full) return [];
  const out = (s.output ?? {}) as Record<string, unknown>;
  const input = s.input as Record<string, unknown>;
  const block = (label: string, value: unknown): string[] => {
    if (value === undefined) return [];
    const text = typeof value === 'string' ? value : JSON.stringify(value, null, 2);
    const lines = format.escape(text ?? 'null', { keepNewlines: true }).split('\n');
    return lines.length === 1 ? [`${label}: ${lines[0]}`] : [`${label}:`, ...lines.map((l) => `  ${l}`)];
  };
  switch (s.type) {
    case 'turn':
      return [...block('user message', input.user_message), ...block('answer', out.answer)];
    case 'llm_call': {
      const lines: string[] = [...block('system', input.system)];
      const messages = input.messages as { role?: string; content?: unknown; tool_call_id?: string; missing?: string }[] | undefined;
      for (const m of messages ?? []) {
        if (m.missing) lines.push(`[missing from the store: ${m.missing}]`);
        else lines.push(...block(`[${m.role}${m.tool_call_id ? ` ${m.tool_call_id}` : ''}]`, m.content));
      }
      if (!messages) lines.push(`(${input.new_messages} new message(s): their text is in the message store)`);
      // The memory sent after the conversation, when it changed since the request before.
      lines.push(...block('memory (after the conversation)', input.notes));
      if (out.tool_mode_decided) lines.push(...block('tool mode', out.tool_mode_decided));
      for (const c of (out.corrections as { problem: string; reply: string }[] | undefined) ?? []) lines.push(...block(`corrected (${c.problem})`, c.reply));
      if (out.reasoning) lines.push(...block('reasoning', out.reasoning));
      if (out.content !== null) lines.push(...block('reply', out.content));
      for (const c of (out.tool_calls as { id: string; name: string; arguments: unknown }[] | undefined) ?? []) lines.push(...block(`call ${c.id} ${c.name}`, c.arguments));
      return lines;
    }
    case 'tool_call': {
      const { execution: _e, approval: _a, ok: _o, ...result } = out;
      return [...block('args', input.args), ...block('policy', input.policy), ...(s.output ? block('result', result) : [])];
    }
    case 'compress':
      return out.compacted ? block('compacted', out.compacted) : [];
    case 'approval':
      return block('request', input);
    default:
      return [];
  }
}
