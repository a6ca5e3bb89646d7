/**
 * `auto`: the first model call of a session whose config leaves the mode to the harness decides
 * it, and its reply records the decision (history), which the turn then keeps, the session
 * carries and a fork copies. Most endpoints decide themselves at no cost: the first call goes out
 * natively, and native tool calls back mean native. Only when the reply has none does a probe ask
 * the endpoint a question that needs a tool, with and without the `tools` field: no call and a
 * prompt that did not grow means the server dropped the tools (a chat template without tool
 * support, as llama.cpp does silently), so the turn runs in text mode, JSON-schema constrained
 * where the endpoint accepts a schema. Decisions are cached per endpoint and model on the worker.
 */
import type { ToolModeDecision } from '../../deterministic/tool-mode';
import { addUsage } from '../../deterministic/usage';
import type { ToolSpec, Usage } from '../../deterministic/types';
import type { ModelAnswer, ModelClient, ModelRequest } from './client';
import { exchange, refusedSchema, type Exchanged } from './exchange';
import { parseTextReply } from '../text-tools/parse';
import { envelopeFormat } from '../text-tools/schema';
// The probe's requests say what they are (the scripted model answers them without using a step).
import { PROBE_PURPOSE } from '../../scripted-model/protocol';
import OpenAI from 'openai';

/** Replies of the probe stay short whatever the session's cap. */
const PROBE_MAX_TOKENS = 64;

const PROBE_TOOL: ToolSpec = {
  name: 'get_current_time',
  description: 'Returns the current date and time.',
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  risk: 'read_only',
  source: 'local',
  timeoutMs: 1_000,
};
const PROBE_MESSAGES: ModelRequest['messages'] = [
  { role: 'system', content: 'You are an assistant that uses tools. When a tool can answer, call it.' },
  { role: 'user', content: 'What time is it now? Call the get_current_time tool to find out.' },
];

/** Decisions this worker made, by endpoint and model. */
export type ToolModeCache = Map<string, ToolModeDecision>;

/** The call answered in the mode `auto` decided, with the decision. */
interface Decided {
  exchanged: Exchanged;
  decided: ToolModeDecision;
}

/** Answers the first call of an auto session, deciding its mode (or taking this worker's earlier decision for the endpoint). */
export async function callDeciding(client: ModelClient, req: ModelRequest, key: string, cache: ToolModeCache): Promise<Decided> {
  const known = cache.get(key);
  if (known) return { exchanged: await inMode(client, req, known, key, cache), decided: known };
  let first: Exchanged | undefined;
  let refused: string | undefined;
  try {
    first = await exchange(client, req, { mode: 'native' });
  } catch (err) {
    // vLLM without a tool parser, llama.cpp without --jinja: the tools field itself is refused.
    if (!(err instanceof OpenAI.APIError) || err.status !== 400 || !/tool/i.test(err.message)) throw err;
    refused = err.message.slice(0, 200);
  }
  if (first?.answer.toolCalls.length) return remember({ mode: 'native', source: 'probe', reason: 'the model answered with native tool calls' }, first);
  const wroteCalls = first && parseTextReply(text(first.answer), new Set(req.tools.map((t) => t.name))).kind === 'calls';
  const decision = refused
    ? await textDecision(client, req, `the endpoint refused the tools field (${refused})`)
    : wroteCalls
      ? await textDecision(client, req, 'the model wrote its tool calls as text, which the endpoint did not read')
      : await probe(client, req);
  if (decision.mode === 'native') return remember(decision, first!);
  // Text mode: the call again, with the tools described in the system message (the first reply
  // was written without seeing them, or in a shape only the text protocol reads).
  const again = await inMode(client, req, decision, key, cache);
  return remember(decision, { ...again, answer: { ...again.answer, usage: sum(first?.answer.usage, again.answer.usage) } });

  function remember(d: ToolModeDecision, exchanged: Exchanged): Decided {
    cache.set(key, d);
    return { exchanged, decided: d };
  }
}

/**
 * The call in a decided mode. Text mode is constrained unless the decision says the endpoint
 * cannot be (a configured mode was never probed: the schema is tried); an endpoint that refuses
 * the schema is remembered on the worker and not sent it again.
 */
export function inMode(client: ModelClient, req: ModelRequest, d: ToolModeDecision, key: string, cache: ToolModeCache): Promise<Exchanged> {
  const refused = `${key}|no-schema`;
  const constrained = d.mode === 'text' ? d.constrained !== false && !cache.has(refused) : undefined;
  return exchange(client, req, { mode: d.mode, ...(constrained !== undefined ? { constrained } : {}) }, () => cache.set(refused, d));
}

/** Asks the endpoint a question that needs a tool, with and without the tools field. */
async function probe(client: ModelClient, req: ModelRequest): Promise<ToolModeDecision> {
  const ask = (tools: ToolSpec[]) =>
    client.complete({ ...probeRequest(req), tools });
  const withTools = await ask([PROBE_TOOL]);
  if (withTools.toolCalls.length) return { mode: 'native', source: 'probe', reason: 'the endpoint answered a probe with a native tool call' };
  if (parseTextReply(text(withTools), new Set([PROBE_TOOL.name])).kind === 'calls') {
    return textDecision(client, req, 'the model answered a probe with a tool call written as text, which the endpoint did not read');
  }
  const without = await ask([]);
  if (withTools.usageEstimated || without.usageEstimated) return textDecision(client, req, 'a probe got no tool call (and the endpoint reports no usage to tell whether it saw the tools)');
  const grew = withTools.usage.prompt_tokens - without.usage.prompt_tokens;
  if (grew <= 0) return textDecision(client, req, `the endpoint dropped the tools: a probe's prompt was ${without.usage.prompt_tokens} tokens with and without them`);
  return { mode: 'native', source: 'probe', reason: `the endpoint passes the tools to the model (a probe's prompt grew by ${grew} tokens with them)` };
}

/** Text mode, constrained when the endpoint takes a JSON schema and answers within it. */
async function textDecision(client: ModelClient, req: ModelRequest, why: string): Promise<ToolModeDecision> {
  let constrained = false;
  try {
    const r = await client.complete({
      ...probeRequest(req),
      messages: [{ role: 'user', content: 'Reply with the JSON object {"answer": "ok"}.' }],
      tools: [],
      responseFormat: envelopeFormat([PROBE_TOOL]),
    });
    const body = JSON.parse(text(r)) as Record<string, unknown>;
    constrained = typeof body === 'object' && body !== null && ('answer' in body || 'tool_calls' in body);
  } catch (err) {
    if (!refusedSchema(err) && !(err instanceof SyntaxError)) throw err;
  }
  return { mode: 'text', constrained, source: 'probe', reason: why };
}

function probeRequest(req: ModelRequest): ModelRequest {
  return {
    model: req.model,
    messages: PROBE_MESSAGES,
    tools: [],
    // The session's header stays (the endpoint may key on it); the call index does not: no step is answered.
    headers: { ...withoutIndex(req.headers), 'x-harness-purpose': PROBE_PURPOSE },
    maxOutputTokens: PROBE_MAX_TOKENS,
    ...(req.signal ? { signal: req.signal } : {}),
  };
}

function withoutIndex(headers: Record<string, string>): Record<string, string> {
  const { 'x-harness-call-index': _index, ...rest } = headers;
  return rest;
}

function text(a: ModelAnswer): string {
  return typeof a.content === 'string' ? a.content : '';
}

function sum(a: Usage | undefined, b: Usage): Usage {
  if (!a) return b;
  return addUsage(a, b); // cached prompt tokens included
}
