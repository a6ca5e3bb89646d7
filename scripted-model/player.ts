/**
 * What the scripted model answers: the script each session plays, the step it is on, how often
 * each faulty step was asked, and the completions it builds from a step. The server (server.ts)
 * reads the request and picks the step; this decides what the step's request gets back.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { contentText, messageText, unmetExpectations, type Script, type ScriptStep } from './script';
import { correctedReply } from './protocol';
import { HttpError, type Json } from './http';

/** The scripts of one server, per session, and where each session is in its own. */
export class ScriptPlayer {
  private readonly scripts = new Map<string, Script>();
  private readonly cursors = new Map<string, number>();
  private readonly summaryCounts = new Map<string, number>();
  private readonly faultCounts = new Map<string, number>();
  private completions = 0;

  /** `fallback` is played by sessions that registered no script of their own. */
  constructor(private readonly fallback?: Script) {}

  /** Sets a session's script; re-registering an identical script is a no-op, a different one starts the session afresh. */
  register(session: string, script: Script): void {
    const current = this.scripts.get(session);
    if (current && JSON.stringify(current) === JSON.stringify(script)) return;
    this.scripts.set(session, script);
    this.cursors.delete(session);
    this.summaryCounts.delete(session);
    for (const key of this.faultCounts.keys()) if (key.startsWith(`${session}\u0000`)) this.faultCounts.delete(key);
  }

  /** The step a session's next request gets when it names none: one past the last answered. */
  cursor(session: string): number {
    return this.cursors.get(session) ?? 0;
  }

  /** Synchronously claims the step (fault counting happens on arrival); returns the deferred answer. */
  stepAnswer(session: string, index: number, body: Json, signal: AbortSignal): () => Promise<Json> {
    const script = this.scriptOf(session);
    if (!script) throw new HttpError(400, 'no_script', `scripted model: no script for session ${session}`);
    const step = script.steps[index];
    if (!step) {
      const n = script.steps.length;
      throw new HttpError(400, 'script_exhausted', `scripted model: script exhausted after ${n} steps (session ${session})`);
    }
    const key = `${session}\u0000${index}`;
    const seen = this.faultCounts.get(key) ?? 0;
    this.faultCounts.set(key, seen + 1);
    return async () => {
      const fault = step.fault;
      const times = fault?.times ?? 1;
      // The first `times` requests of a faulty step are delayed and/or failed; later ones answer normally.
      if (fault && seen < times) {
        if (fault.delay_ms) await sleep(fault.delay_ms, undefined, { signal });
        if (fault.status !== undefined) {
          const message =
            fault.message ?? `scripted fault: HTTP ${fault.status} (${seen + 1} of ${times}) at step ${index + 1}`;
          // A fault's usage goes in the error object: what a provider reports a failed request used.
          throw new HttpError(fault.status, 'scripted_fault', message, fault.status, fault.usage);
        }
      }
      const unmet = step.expect ? unmetExpectations(step.expect, body) : [];
      if (unmet.length > 0) {
        const message = `scripted model: step ${index + 1} expectation failed: ${unmet.join('; ')}`;
        throw new HttpError(400, 'script_expectation_failed', message);
      }
      // Only a successful answer moves the cursor, so faulted calls retry the same step.
      this.cursors.set(session, Math.max(this.cursors.get(session) ?? 0, index + 1));
      return this.completion(step, index, body);
    };
  }

  /** A correction of a step's reply: its `corrected` reply, with no faults or expectations (the step had them). */
  correctionAnswer(session: string, index: number, n: number, body: Json): () => Promise<Json> {
    const step = this.scriptOf(session)?.steps[index];
    if (!step) throw new HttpError(400, 'script_exhausted', `scripted model: no step ${index + 1} to correct (session ${session})`);
    return async () => this.completion(correctedReply(step, n), index, body);
  }

  /** A compress call's answer: the script's next summary (the last one repeats), or one made from the user messages. */
  summaryAnswer(session: string, body: Json): Json {
    const summaries = this.scriptOf(session)?.summaries ?? [];
    const n = this.summaryCounts.get(session) ?? 0;
    this.summaryCounts.set(session, n + 1);
    const messages = body.messages as unknown[];
    const content =
      summaries.length > 0
        ? summaries[Math.min(n, summaries.length - 1)]
        : `Summary of ${messages.length} earlier messages: ` +
          messages.filter((m) => (m as { role?: unknown } | null)?.role === 'user').map((m) => contentText(m).slice(0, 200)).join(' | ');
    return this.completion({ content }, null, body);
  }

  private scriptOf(session: string): Script | undefined {
    return this.scripts.get(session) ?? this.fallback;
  }

  /** A chat completion of a step's reply; usage is estimated at four characters a token. */
  private completion(step: Pick<ScriptStep, 'content' | 'tool_calls'>, index: number | null, body: Json): Json {
    const toolCalls = (step.tool_calls ?? []).map((tc, j) => ({
      id: tc.id ?? `call_${index ?? 'summary'}_${j}`,
      type: 'function',
      function: { name: tc.name, arguments: typeof tc.arguments === 'string' ? tc.arguments : JSON.stringify(tc.arguments) },
    }));
    const message: Json = { role: 'assistant', content: step.content ?? null };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    const outChars = (step.content ?? '').length + toolCalls.reduce((sum, tc) => sum + tc.function.arguments.length, 0);
    const inChars = (body.messages as unknown[]).reduce<number>((sum, m) => sum + messageText(m).length, 0);
    const prompt_tokens = Math.ceil(inChars / 4);
    const completion_tokens = Math.max(1, Math.ceil(outChars / 4));
    return {
      id: `chatcmpl-scripted-${++this.completions}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : 'scripted',
      choices: [{ index: 0, message, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop', logprobs: null }],
      usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
    };
  }
}
