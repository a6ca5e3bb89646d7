/**
 * The ReAct step loop, independent of Temporal: the turn workflow runs it with activities,
 * the step benchmark runs it in-process. It must stay deterministic (no clocks, I/O, randomness).
 */
import type { ModelCallInput, ModelReply } from '../common/activity-types';
import { builtinRegistry } from '../common/builtin-tools';
import { rootCauseMessage, toolError, toolOk } from '../common/errors';
import { addUsage, type ToolCallRecord, type TurnInput, type TurnResult, type TerminatedBy } from '../common/session';
import { describeIssues, type ToolRegistry } from '../common/tools';
import type { ChatMessage, ToolCall, ToolResult } from '../common/types';
import { buildSystemMessage } from './system-message';
import { RepeatGuard } from './repeat-guard';

/** What the loop needs from the outside world. */
export interface TurnOps {
  callModel(input: ModelCallInput): Promise<ModelReply>;
  executeTool(call: { step: number; callId: string; name: string; args: unknown; timeoutMs: number }): Promise<ToolResult>;
  /** Waits for a human answer; resolves `undefined` on timeout. */
  askUser(callId: string, question: string): Promise<string | undefined>;
  /** Called before each model call so the host can expose progress. */
  onStep?(step: number): void;
}

/** Runs one turn to termination and returns its result. Tool failures never throw. */
export async function runTurn(input: TurnInput, ops: TurnOps, registry: ToolRegistry = builtinRegistry()): Promise<TurnResult> {
  const { limits } = input.config;
  const maxSteps = input.maxSteps ?? limits.maxSteps;
  const memory = { ...input.memory };
  const added: ChatMessage[] = [{ role: 'user', content: input.userMessage }];
  const toolCalls: ToolCallRecord[] = [];
  const repeat = new RepeatGuard(limits.repeatLimit);
  let usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let modelCalls = 0;
  let failedSteps = 0;
  let lastContent = '';

  const done = (terminated_by: TerminatedBy, answer: string, steps: number, error?: string): TurnResult => ({
    sessionId: input.sessionId,
    turnId: input.turnId,
    turn: input.turn,
    answer,
    terminated_by,
    steps,
    usage,
    messages: added,
    memory,
    modelCalls,
    toolCalls,
    ...(error ? { error } : {}),
  });

  for (let step = 1; step <= maxSteps; step++) {
    ops.onStep?.(step);
    const system = buildSystemMessage(input.config.systemPrompt, memory);
    let reply: ModelReply;
    try {
      reply = await ops.callModel({
        sessionId: input.sessionId,
        turnId: input.turnId,
        step,
        callIndex: input.modelCallBase + modelCalls,
        model: modelRef(input),
        messages: [{ role: 'system', content: system }, ...input.history, ...added],
        tools: registry.names(),
      });
    } catch (err) {
      // ops.callModel throws only once retries are spent or the error is permanent.
      const why = rootCauseMessage(err);
      return done('failed', `The model call failed: ${why}`, step, why);
    }
    modelCalls++;
    usage = addUsage(usage, reply.usage);
    lastContent = reply.content ?? lastContent;
    added.push({ role: 'assistant', content: reply.content, ...(reply.toolCalls.length ? { tool_calls: reply.toolCalls } : {}) });
    if (reply.toolCalls.length === 0) return done('final_answer', reply.content ?? '', step);

    const verdict = repeat.observe(reply.toolCalls);
    if (verdict === 'stop') {
      for (const call of reply.toolCalls) {
        added.push(toolMessage(call.id, toolError('REPEATED_ACTION', 'Stopped: the same call was repeated after a warning.', { recoverable: false })));
      }
      return done('repeated_action', lastContent || 'Stopped: the same action was repeated.', step);
    }

    let finishAnswer: string | undefined;
    let anyOk = false;
    let anyFailed = false;
    for (const call of reply.toolCalls) {
      const { args, result } = await handleCall(call, step);
      if (call.name === 'finish' && result.ok) finishAnswer = (args as { answer: string }).answer;
      anyOk ||= result.ok;
      anyFailed ||= !result.ok;
      toolCalls.push({ step, callId: call.id, name: call.name, args, ok: result.ok, ...(result.error_type ? { error_type: result.error_type } : {}) });
      added.push(toolMessage(call.id, result));
    }
    if (finishAnswer !== undefined) return done('finish', finishAnswer, step);
    if (verdict === 'warn') {
      added.push({ role: 'user', content: repeat.warning(reply.toolCalls) });
    }
    failedSteps = anyFailed && !anyOk ? failedSteps + 1 : 0;
    if (failedSteps >= limits.errorLimit) {
      return done('error_limit', lastContent || `Stopped after ${failedSteps} consecutive failed steps.`, step);
    }
  }
  return done('max_steps', lastContent || `Stopped after ${maxSteps} steps without a final answer.`, maxSteps);

  /** Parse → look up → validate → run, each failure becoming a result the model sees. */
  async function handleCall(call: ToolCall, step: number): Promise<{ args: unknown; result: ToolResult }> {
    const def = registry.get(call.name);
    if (!def) {
      return {
        args: call.arguments,
        result: toolError('UNKNOWN_TOOL', `There is no tool named "${call.name}".`, {
          suggestion: `Use one of: ${registry.names().join(', ')}.`,
        }),
      };
    }
    let raw: unknown;
    try {
      raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (err) {
      return {
        args: call.arguments,
        result: toolError('INVALID_ARGUMENTS', `Arguments of ${call.name} are not valid JSON: ${(err as Error).message}`, {
          suggestion: 'Send the arguments as one JSON object matching the tool schema.',
        }),
      };
    }
    const parsed = def.parameters.safeParse(raw);
    if (!parsed.success) {
      return {
        args: raw,
        result: toolError('INVALID_ARGUMENTS', `Invalid arguments for ${call.name}: ${describeIssues(parsed.error)}`, {
          suggestion: 'Fix the named fields and call the tool again.',
        }),
      };
    }
    const args = parsed.data as Record<string, unknown>;
    if (def.runsIn === 'activity') {
      return { args, result: await ops.executeTool({ step, callId: call.id, name: call.name, args, timeoutMs: def.timeoutMs }) };
    }
    switch (call.name) {
      case 'finish':
        return { args, result: toolOk({ finished: true }) };
      case 'remember': {
        const { key, value } = args as { key: string; value: string };
        if (value === '') delete memory[key];
        else memory[key] = value;
        return { args, result: toolOk({ remembered: key }) };
      }
      case 'ask_user': {
        const answer = await ops.askUser(call.id, (args as { question: string }).question);
        if (answer === undefined) {
          return {
            args,
            result: toolError('USER_TIMEOUT', 'The user did not answer in time.', {
              suggestion: 'Continue with what you know, or finish and say what is missing.',
            }),
          };
        }
        return { args, result: toolOk({ answer }) };
      }
      default:
        return { args, result: toolError('UNKNOWN_TOOL', `Tool "${call.name}" has no workflow implementation.`, { recoverable: false }) };
    }
  }
}

function toolMessage(callId: string, result: ToolResult): ChatMessage {
  return { role: 'tool', tool_call_id: callId, content: JSON.stringify(result) };
}

function modelRef(input: TurnInput): ModelCallInput['model'] {
  const m = input.config.model;
  return m.provider === 'openai'
    ? { provider: 'openai', model: m.model, ...(m.baseUrl ? { baseUrl: m.baseUrl } : {}) }
    : { provider: 'scripted', model: m.model };
}
