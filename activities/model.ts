/** The callModel activity: one chat-completions call, heartbeating while it waits. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelCallInput, ModelReply } from '../common/activity-types';
import type { ToolSpec } from '../common/types';
import type { ModelClient } from './model-client';
import { toModelFailure } from './model-errors';

/** Resolves the client and endpoint description for a model reference. */
export type ModelResolver = (input: ModelCallInput) => Promise<{ client: ModelClient; endpoint: string }>;

/** Builds callModel over a resolver and a source of tool schemas. */
export function createCallModel(resolve: ModelResolver, toolSpecs: (names: string[]) => ToolSpec[]) {
  return async function callModel(input: ModelCallInput): Promise<ModelReply> {
    const ctx = Context.current();
    const { client, endpoint } = await resolve(input);
    // Heartbeats let Temporal notice a dead worker long before the call's own timeout.
    const beat = setInterval(() => ctx.heartbeat(), Math.max(100, (ctx.info.heartbeatTimeoutMs ?? 10_000) / 3));
    const started = Date.now();
    try {
      const answer = await client.complete({
        model: input.model.model,
        messages: input.messages,
        tools: toolSpecs(input.tools),
        headers: {
          'x-harness-session': input.sessionId,
          'x-harness-call-index': String(input.callIndex),
          'x-harness-purpose': input.purpose ?? 'turn',
        },
        signal: ctx.cancellationSignal,
      });
      return { ...answer, attempt: ctx.info.attempt, latencyMs: Date.now() - started };
    } catch (err) {
      throw toModelFailure(err, endpoint);
    } finally {
      clearInterval(beat);
    }
  };
}

/** A permanent configuration problem (e.g. no API key on the worker). */
export function modelNotConfigured(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, 'MODEL_NOT_CONFIGURED');
}
