/**
 * The workflows' message definitions, made as @temporalio/workflow's define* helpers make them
 * (the same plain objects). Clients import the definitions too, and that package's index loads
 * the whole workflow runtime with them, which a client process has no use for.
 */
import type { QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/common';

export function defineSignal<Args extends unknown[] = []>(name: string): SignalDefinition<Args> {
  return { type: 'signal', name } as SignalDefinition<Args>;
}

export function defineQuery<Ret, Args extends unknown[] = []>(name: string): QueryDefinition<Ret, Args> {
  return { type: 'query', name } as QueryDefinition<Ret, Args>;
}

export function defineUpdate<Ret, Args extends unknown[] = []>(name: string): UpdateDefinition<Ret, Args> {
  return { type: 'update', name } as UpdateDefinition<Ret, Args>;
}
