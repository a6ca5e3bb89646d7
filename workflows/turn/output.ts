/**
 * Structured output in the step loop (deterministic/output.ts has the check): the session's
 * output schema read once per run of a turn, the system prompt that states it, and what a final
 * answer does — ends the turn with its validated object, goes back to the model with what is
 * wrong (a step like any other), or, past limits.outputRetries, fails the turn with
 * OUTPUT_INVALID. Only sessions whose config has `output` reach this, so no recorded history
 * takes it. Pure and deterministic.
 */
import { builtinRegistry } from '../../deterministic/builtin-tools';
import { finishAnswerOf, outputFinishTool } from '../../deterministic/finish-output';
import { OUTPUT_INVALID, outputCheck, outputFailure, outputRetryNote, type OutputCheck } from '../../deterministic/output';
import type { TerminatedBy, TurnInput } from '../../deterministic/session';
import type { ToolRegistry } from '../../deterministic/tools';
import type { TurnOptions } from './loop';
import type { LoopState, TurnEnd } from './state';

/** The session's structured output for this run: its check, or why it cannot be used (a hand-written config); empty without one. */
export function turnOutput(input: TurnInput, opts: Pick<TurnOptions, 'finishAnswer'> = {}): { check?: OutputCheck; refuse?: TurnEnd } {
  const spec = input.config.output;
  if (!spec) return {};
  const built = outputCheck(spec, input.config.limits.outputRetries, opts.finishAnswer !== undefined);
  if ('problem' in built) {
    const error = `the session's output schema cannot be used: ${built.problem}`;
    return { refuse: { terminated_by: 'failed', answer: `The turn could not start: ${error}`, steps: 0, error, errorType: OUTPUT_INVALID } };
  }
  return { check: built };
}

/** The session's system prompt, with the answer's shape when the session has structured output. */
export function promptOf(input: TurnInput, check: OutputCheck | undefined): string {
  return check ? check.prompt(input.config.systemPrompt) : input.config.systemPrompt;
}

/**
 * How a turn ends with this final answer, or undefined when the model is to answer again: the
 * answer did not match and retries are left (the conversation then has a note saying what is wrong).
 */
export function outputEnd(check: OutputCheck, s: LoopState, by: TerminatedBy, answer: unknown, steps: number): TurnEnd | undefined {
  const checked = check.check(answer);
  if (checked.ok) return { terminated_by: by, answer: JSON.stringify(checked.value), steps, output: checked.value };
  s.invalidOutputs++;
  if (s.invalidOutputs > check.retries) {
    const text = typeof answer === 'string' ? answer : (JSON.stringify(answer) ?? '');
    return { terminated_by: 'failed', answer: text, steps, error: outputFailure(checked.problem, s.invalidOutputs), errorType: OUTPUT_INVALID };
  }
  s.conversation.add({ role: 'user', content: outputRetryNote(checked.problem, s.invalidOutputs, check.retries + 1) });
  return undefined;
}

/**
 * The loop's options when finish takes the answer object (the `finish-output-schema` patch): its
 * registries have finish as deterministic/finish-output.ts checks it, and a finish call's
 * answer is its arguments.
 */
export function withOutputFinish(opts: TurnOptions, schema: Record<string, unknown>): TurnOptions {
  const finish = outputFinishTool();
  const swap = (r: ToolRegistry) => r.replacing(finish);
  const { mcp } = opts;
  return {
    ...opts,
    registry: swap(opts.registry ?? builtinRegistry()),
    ...(mcp ? { mcp: { ...mcp, registry: (t) => swap(mcp.registry(t)) } } : {}),
    finishAnswer: (args) => finishAnswerOf(args, schema),
  };
}
