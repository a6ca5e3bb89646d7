/**
 * One compact line per live event (a span that closed, a wait for a person that began, a model
 * call being retried), for the CLI's live view of a turn: what the step did, with tokens and
 * time, each tool call's decision, rule and outcome, and who decided. Text from a model, a tool
 * or a person goes through the caller's escaper, as in render.ts.
 */
import type { SpanChange } from './live';
import type { Escaper } from '../../history/trace/render';
import type { Span } from '../../history/trace/types';
import { styled, type Style, type Text } from '../../machine/terminal/text';
import { argLine, callView } from '../../machine/call-view';

/** What the lines are for. */
interface LiveLineOptions {
  escape: Escaper;
  color: boolean;
  /** A prompt at this terminal asks for approvals and answers itself: no line for the wait. */
  prompting?: boolean;
  /** Lines for turns starting and ending (`status --follow`); `run` prints its own result. */
  turns?: boolean;
}

/** The line for a change, or undefined when it is not worth one. */
export function liveLine(c: SpanChange, o: LiveLineOptions): Text | undefined {
  const paint = (style: Style, t: Text): Text => (o.color ? styled(style, t) : t);
  const s = c.span;
  const out = (s.output ?? {}) as Record<string, unknown>;
  const input = s.input as Record<string, unknown>;
  const clip = (v: unknown, max = 80) => o.escape(oneLine(v, max));
  // A sub-agent's steps are its own, numbered from 1: said whose they are.
  const step = (n: unknown): Text => paint('cyan', `${c.agent ? `${o.escape(c.agent)} › ` : ''}step ${String(n ?? '?')}`);
  const dur = paint('dim', duration(s));
  switch (s.type) {
    case 'turn': {
      if (!o.turns) return undefined;
      if (c.change === 'opened') return [paint('bold', `turn ${o.escape(s.name)}`), ` ${clip(input.user_message)}`];
      if (c.change !== 'closed') return undefined;
      const usage = out.usage as { total_tokens?: number } | undefined;
      const how = String(out.terminated_by ?? out.status ?? s.status);
      return [paint('bold', `turn ${o.escape(s.name)}`), ' ', s.status === 'ok' ? paint('green', o.escape(how)) : paint('red', o.escape(how)), ` · ${out.steps ?? '?'} step(s)${usage ? ` · ${usage.total_tokens} tokens` : ''} `, dur];
    }
    case 'llm_call': {
      if (c.change === 'updated' && Number(out.attempts) > 1) {
        return [step(input.step), ' · ', paint('yellow', `model call attempt ${String(out.attempts)}`), out.last_failure ? ` (last failure: ${clip(out.last_failure)})` : ''];
      }
      if (c.change !== 'closed') return undefined;
      const usage = out.usage as { total_tokens?: number; prompt_tokens?: number; completion_tokens?: number } | undefined;
      const calls = (out.tool_calls as { name: string }[] | undefined) ?? [];
      const tokens = usage ? ` · ${usage.total_tokens} tokens (${usage.prompt_tokens}+${usage.completion_tokens})` : '';
      if (s.status !== 'ok') return [step(input.step), ' · model ', paint('red', `failed: ${clip(s.error, 160)}`), ' ', dur];
      const what: Text = calls.length ? `→ ${calls.map((x) => o.escape(x.name)).join(', ')}` : ['→ ', paint('green', 'answer'), ` ${clip(out.content)}`];
      return [step(input.step), ` · model ${o.escape(s.name)}${tokens} · `, dur, ' ', what];
    }
    case 'compress':
      if (c.change !== 'closed') return undefined;
      return [step(input.step), s.status === 'ok' ? ` · context compressed ${String(out.before_tokens)} → ${String(out.after_tokens)} tokens ` : ` · compression failed: ${clip(s.error)} `, dur];
    case 'tool_call': {
      if (c.change !== 'closed') return undefined;
      const policy = input.policy as { decision?: string; rule?: string } | undefined;
      const approval = out.approval as { approved?: boolean; by?: string; always?: boolean } | undefined;
      const parts: Text[] = [step(input.step), ' · ', paint('bold', o.escape(s.name)), ` ${clip(argsText(input.args), 60)}`];
      if (policy?.decision) parts.push(` · ${policy.decision}${policy.rule ? ` (${o.escape(policy.rule)})` : ''}`);
      if (approval?.by) parts.push(` · ${approval.approved ? 'approved' : 'denied'}${approval.always ? ' (always)' : ''} by ${o.escape(approval.by)}`);
      parts.push(' · ', s.status === 'ok' ? paint('green', 'ok') : paint('red', clip(s.error, 120)), ' ', dur);
      return parts;
    }
    case 'approval': {
      if (c.change === 'opened') return o.prompting ? undefined : approvalWait(s, o, step(stepOf(input)), paint('yellow', 'waiting for approval'));
      if (c.change !== 'closed' || o.prompting) return undefined;
      if (out.timed_out) return [paint('red', 'approval timed out: nobody decided in time')];
      return [`${o.escape(String(input.tool ?? ''))} `, out.approved ? paint('green', `approved${out.always ? ' (always)' : ''}`) : paint('red', 'denied'), out.by ? ` by ${o.escape(String(out.by))}` : '', out.reason ? `: ${clip(out.reason)}` : ''];
    }
    case 'ask_user': {
      if (c.change === 'opened') return o.prompting ? undefined : [paint('yellow', 'waiting for an answer'), `: ${clip(input.question, 120)}`];
      if (c.change !== 'closed' || o.prompting) return undefined;
      return out.answer === undefined ? [paint('red', `question: ${clip(s.error ?? 'no answer')}`)] : [`answered${out.by ? ` by ${o.escape(String(out.by))}` : ''}: ${clip(out.answer)}`];
    }
    case 'wait': {
      if (c.change === 'opened') return [paint('yellow', 'sleeping'), ` until ${o.escape(String(input.until ?? ''))}: ${clip(input.reason, 120)}`];
      if (c.change !== 'closed') return undefined;
      return out.woken ? [paint('cyan', 'woken'), out.by ? ` by ${o.escape(String(out.by))}` : '', out.reason ? `: ${clip(out.reason)}` : ''] : ['slept until ', o.escape(String(input.until ?? ''))];
    }
    case 'message':
      if (c.change !== 'closed') return undefined;
      return [paint('cyan', 'message sent while it ran'), ` ${clip(input.text, 120)} · `, input.mode === 'interrupt' ? paint('yellow', 'interrupted the step') : 'queued for the next step'];
    case 'budget': {
      if (c.change === 'opened') return o.prompting ? undefined : [paint('yellow', 'waiting for a budget decision'), ` (${o.escape(String(input.scope ?? ''))} budget reached)`];
      if (c.change !== 'closed' || o.prompting) return undefined;
      return [`budget ${o.escape(String(out.decision ?? s.status))}${out.by ? ` by ${o.escape(String(out.by))}` : ''}`];
    }
    default:
      return undefined;
  }
}

/**
 * A call waiting for approval: the tool (and its command), the rule, then every other argument on
 * a line of its own (machine/call-view.ts), as every approval view shows it.
 */
function approvalWait(s: Span, o: LiveLineOptions, step: Text, label: Text): Text {
  const input = s.input as Record<string, unknown>;
  const callId = String(input.call_id ?? '');
  const v = callView(input.args ?? {});
  const head = `: ${o.escape(String(input.tool ?? ''))}${v.headline !== undefined ? ` ${v.headline}` : ''}${input.rule ? ` (rule ${o.escape(String(input.rule))})` : ''}`;
  return [step, ' · ', label, head, ...v.args.map((a) => `\n    ${o.escape(argLine(a, s.session_id, callId))}`)];
}

/** The step a call id names (`t1-s3-c0` → 3). */
function stepOf(input: Record<string, unknown>): number | undefined {
  const m = /-s(\d+)-c\d+$/.exec(String(input.call_id ?? ''));
  return m ? Number(m[1]) : undefined;
}

/** A call's arguments as short text: a command or a path when there is one, else JSON. */
function argsText(args: unknown): string {
  const a = (args ?? {}) as Record<string, unknown>;
  for (const k of ['command', 'path', 'url', 'query', 'question']) if (typeof a[k] === 'string') return a[k];
  return JSON.stringify(args ?? {}) ?? '';
}

function oneLine(v: unknown, max: number): string {
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function duration(s: Span): string {
  if (s.duration_ms === null) return '';
  return s.duration_ms < 1000 ? `${s.duration_ms} ms` : `${(s.duration_ms / 1000).toFixed(1)} s`;
}
