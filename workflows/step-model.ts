/**
 * What a step of the loop sends to the model and what it reads of the reply: the identity of the
 * step's model traffic, the model call's input, the reply's tool calls, and when the context is
 * compressed first. Pure and deterministic.
 */
import type { CompressContextResult } from '../deterministic/context/types';
import type { ModelCallInput, ModelReply } from '../deterministic/activity-types';
import { limitTokens } from '../deterministic/context/plan';
import type { CompressionRecord, TurnInput } from '../deterministic/session';
import type { ChatMessage, ToolCall } from '../deterministic/types';
import { StoredConversation, type ContextParts, type TurnConversation } from './turn/conversation';
import { assignCallIds } from './turn/judge';
import type { TurnOptions } from './turn-ops';
import type { LoopState } from './turn/state';

/** What identifies a step's model traffic (a compression and the call share the index), with the context it carries. */
export type StepTraffic = Pick<ModelCallInput, 'sessionId' | 'turnId' | 'step' | 'callIndex' | 'model'> & ContextParts;

/**
 * The step's traffic as it stands: read again for each call, since a compression changes the
 * context and the stored conversation notes which system text it offered.
 */
export function stepTraffic(input: TurnInput, s: LoopState, step: number, system: string): StepTraffic {
  return {
    sessionId: input.sessionId,
    turnId: input.turnId,
    step,
    callIndex: input.modelCallBase + s.modelCalls,
    model: modelRef(input),
    ...s.conversation.context(system),
  };
}

/** Whether the context passed the compression threshold (then it is compressed fully before the call). */
export function overThreshold(conversation: TurnConversation, system: string, compression: NonNullable<TurnInput['config']['compression']>): boolean {
  return conversation.estimate(system) > limitTokens(compression);
}

/** What the turn result records of a compression that changed the conversation. */
export function compressionRecord(step: number, c: CompressContextResult): CompressionRecord {
  const { before_tokens, after_tokens, summarized_messages, compacted_tool_results } = c;
  return { step, before_tokens, after_tokens, summarized_messages, compacted_tool_results };
}

/** The model call's input: the step's traffic, the tools offered, and (with the store) the prefix of the step's call ids. */
export function modelCallInput(traffic: StepTraffic, input: TurnInput, opts: TurnOptions, s: LoopState, step: number): ModelCallInput {
  return {
    ...traffic,
    tools: s.registry.names(),
    ...(s.mcpTools?.ref ? { mcpTools: s.mcpTools.ref } : {}),
    ...(opts.custom?.tools.ref ? { customTools: opts.custom.tools.ref } : {}),
    ...(s.conversation instanceof StoredConversation ? { callIdPrefix: `t${input.turn}-s${step}` } : {}),
  };
}

/** The reply's tool calls with the ids the turn uses (with the store the activity gave the harness ids already: the stored message has them). */
export function stepCalls(reply: ModelReply, opts: TurnOptions, turn: number, step: number): ToolCall[] {
  return opts.harnessCallIds && !reply.conversation ? assignCallIds(reply.toolCalls, turn, step) : reply.toolCalls;
}

/** The assistant message a reply makes, with the calls as the turn names them. */
export function assistantMessage(reply: ModelReply, calls: ToolCall[]): ChatMessage {
  return { role: 'assistant', content: reply.content, ...(calls.length ? { tool_calls: calls } : {}) };
}

/** The model as the model and compression calls name it: provider, name and (OpenAI) endpoint only. */
function modelRef(input: TurnInput): ModelCallInput['model'] {
  const m = input.config.model;
  return m.provider === 'openai'
    ? { provider: 'openai', model: m.model, ...(m.baseUrl ? { baseUrl: m.baseUrl } : {}) }
    : { provider: 'scripted', model: m.model };
}
