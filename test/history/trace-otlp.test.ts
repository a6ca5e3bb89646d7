/**
 * The OTLP conversion without a receiver: each span type's GenAI and OpenInference attributes,
 * ids, times and status kept from our spans, running spans left out, the endpoint URL rules and
 * the resource; and the one-line errors of a receiver that answers non-2xx (a local HTTP server).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../machine/errors';
import { exportSpans, traceResource } from '../../history/trace/otlp';
import { endpointFromEnv, EndpointError, otlpTracesUrl } from '../../history/trace/otlp-endpoint';
import { toOtelSpans } from '../../history/trace/otlp-spans';
import type { Span } from '../../history/trace/types';

const TRACE = 'b723594beedda9bfefca387136674346';
const SESSION = 'otlp-unit';

function span(fields: Partial<Span> & Pick<Span, 'span_id' | 'type' | 'name'>): Span {
  return {
    trace_id: TRACE,
    session_id: SESSION,
    parent_id: null,
    start: '2026-01-01T10:00:00.000Z',
    end: '2026-01-01T10:00:01.000Z',
    duration_ms: 1000,
    status: 'ok',
    input: {},
    output: {},
    error: null,
    ...fields,
  };
}

const turn = span({
  span_id: '19995a8cb3f97a70',
  type: 'turn',
  name: `${SESSION}/turn-1`,
  input: { turn: 1, user_message: 'write a.txt', model: 'openai:gpt-4o-mini' },
  output: { status: 'completed', terminated_by: 'final_answer', answer: 'done', usage: { prompt_tokens: 869, completion_tokens: 20, total_tokens: 889 } },
});
const step = span({ span_id: 'c2e8f9178c38319c', parent_id: turn.span_id, type: 'step', name: 'step 1', input: { step: 1 }, output: { tool_calls: 2 } });
const llm = span({
  span_id: 'c4690ade719f4319',
  parent_id: step.span_id,
  type: 'llm_call',
  name: 'gpt-4o-mini',
  start: '2026-01-01T10:00:00.100Z',
  end: '2026-01-01T10:00:00.350Z',
  input: { step: 1, call_index: 0, model: 'openai:gpt-4o-mini', tools: ['read_file'], new_messages: 1 },
  output: {
    attempts: 2,
    content: null,
    tool_calls: [{ id: 't1-s1-c0', name: 'write_file', arguments: { path: 'a.txt', content: 'hi' } }],
    usage: { prompt_tokens: 238, completion_tokens: 9, total_tokens: 247 },
    model: 'gpt-4o-mini-2024-07-18',
  },
});
const tool = span({
  span_id: 'd23fb13f581624ab',
  parent_id: step.span_id,
  type: 'tool_call',
  name: 'write_file',
  source: 'local',
  input: { call_id: 't1-s1-c0', step: 1, args: { path: 'a.txt', content: 'hi' }, risk: 'write', policy: { decision: 'ask', reason: 'asks', rule: 'mode ask' } },
  output: { ok: true, result: { bytes_written: 2 }, approval: { approved: true, by: 'me@host' } },
});
const approval = span({
  span_id: '9123f99cb673571c',
  parent_id: tool.span_id,
  type: 'approval',
  name: 'approval write_file',
  input: { call_id: 't1-s1-c0', tool: 'write_file' },
  output: { approved: true, by: 'me@host' },
});
const failed = span({
  span_id: 'eb6d07ceccee79e8',
  parent_id: step.span_id,
  type: 'tool_call',
  name: 'read_file',
  status: 'error',
  input: { call_id: 't1-s1-c1', step: 1, args: { path: '../x' } },
  output: { ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE', message: 'outside' },
  error: 'PATH_OUTSIDE_WORKSPACE: outside',
});
const running = span({ span_id: '2a98ca17d55ca93b', parent_id: step.span_id, type: 'ask_user', name: 'ask_user', status: 'running', end: null, duration_ms: null, input: { call_id: 't1-s2-c0', question: 'Which?' }, output: null });

const converted = toOtelSpans([turn, step, llm, tool, approval, failed, running], traceResource({}));
const byId = new Map(converted.map((s) => [s.spanContext().spanId, s]));
const get = (s: Span) => byId.get(s.span_id)!;

describe('toOtelSpans', () => {
  it('keeps our trace id, span ids, parent links, times and status', () => {
    for (const [ours, otel] of [turn, step, llm, tool, approval, failed].map((s) => [s, get(s)] as const)) {
      expect(otel.spanContext().traceId).toBe(TRACE);
      expect(otel.parentSpanContext?.spanId).toBe(ours.parent_id ?? undefined);
      expect(hrTimeToMilliseconds(otel.startTime)).toBe(Date.parse(ours.start!));
      expect(hrTimeToMilliseconds(otel.endTime)).toBe(Date.parse(ours.end!));
    }
    expect(get(turn).parentSpanContext).toBeUndefined();
    expect(get(tool).status).toEqual({ code: SpanStatusCode.OK });
    expect(get(failed).status).toEqual({ code: SpanStatusCode.ERROR, message: 'PATH_OUTSIDE_WORKSPACE: outside' });
    expect(get(failed).attributes['error.type']).toBe('PATH_OUTSIDE_WORKSPACE');
    expect(get(turn).resource.attributes['service.name']).toBe('durable-agent-harness');
  });

  it('the turn is an invoke_agent AGENT span of the session', () => {
    const s = get(turn);
    expect(s.name).toBe(`invoke_agent ${SESSION}/turn-1`);
    expect(s.kind).toBe(SpanKind.INTERNAL);
    expect(s.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'harness',
      'gen_ai.conversation.id': SESSION,
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 869,
      'gen_ai.usage.output_tokens': 20,
      'openinference.span.kind': 'AGENT',
      'agent.name': 'harness',
      'session.id': SESSION,
      'harness.terminated_by': 'final_answer',
    });
    // Phoenix sums llm.token_count up the tree: only LLM spans carry it.
    expect(s.attributes['llm.token_count.prompt']).toBeUndefined();
    expect(JSON.parse(String(s.attributes['input.value']))).toEqual(turn.input);
    expect(JSON.parse(String(s.attributes['output.value']))).toEqual(turn.output);
    expect(s.attributes['input.mime_type']).toBe('application/json');
  });

  it('a model call is a chat LLM span with model, provider, usage and the calls it asked for', () => {
    const s = get(llm);
    expect(s.name).toBe('chat gpt-4o-mini');
    expect(s.kind).toBe(SpanKind.CLIENT);
    expect(s.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.usage.input_tokens': 238,
      'gen_ai.usage.output_tokens': 9,
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'gpt-4o-mini-2024-07-18',
      'llm.provider': 'openai',
      'llm.token_count.prompt': 238,
      'llm.token_count.completion': 9,
      'llm.token_count.total': 247,
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 't1-s1-c0',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'write_file',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"path":"a.txt","content":"hi"}',
      'harness.attempts': 2,
    });
    // Without --full the request's messages are not in the span, so none are exported.
    expect(Object.keys(s.attributes).filter((k) => k.startsWith('llm.input_messages'))).toEqual([]);
  });

  it('with --full payloads, the request messages become OpenInference input messages', () => {
    const full = { ...llm, input: { ...llm.input, messages: [{ role: 'user', content: 'write a.txt' }] } };
    const [s] = toOtelSpans([full], traceResource({}));
    expect(s!.attributes).toMatchObject({ 'llm.input_messages.0.message.role': 'user', 'llm.input_messages.0.message.content': 'write a.txt' });
  });

  it('a tool call is an execute_tool TOOL span with name, call id and the policy verdict', () => {
    const s = get(tool);
    expect(s.name).toBe('execute_tool write_file');
    expect(s.kind).toBe(SpanKind.INTERNAL);
    expect(s.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'write_file',
      'gen_ai.tool.call.id': 't1-s1-c0',
      'gen_ai.tool.type': 'function',
      'openinference.span.kind': 'TOOL',
      'tool.name': 'write_file',
      'tool.id': 't1-s1-c0',
      'harness.source': 'local',
      'harness.tool.risk': 'write',
      'harness.policy.decision': 'ask',
      'harness.policy.rule': 'mode ask',
      'harness.approval.approved': true,
    });
    expect(JSON.parse(String(s.attributes['input.value'])).args).toEqual({ path: 'a.txt', content: 'hi' });
  });

  it('steps, approvals and questions are CHAIN spans under their parents', () => {
    expect(get(step).attributes).toMatchObject({ 'openinference.span.kind': 'CHAIN', 'harness.step': 1 });
    expect(get(approval).name).toBe('approval write_file');
    expect(get(approval).attributes).toMatchObject({ 'openinference.span.kind': 'CHAIN', 'gen_ai.tool.call.id': 't1-s1-c0', 'harness.approval.approved': true, 'harness.approval.by': 'me@host' });
  });

  it('leaves out running spans (a later export adds them whole); an untimed span takes its parent\'s time', () => {
    expect(byId.has(running.span_id)).toBe(false);
    expect(converted).toHaveLength(6);
    const untimed = { ...failed, span_id: 'aaaaaaaaaaaaaaaa', start: null, end: null, duration_ms: null };
    const [s] = toOtelSpans([step, untimed], traceResource({})).filter((x) => x.spanContext().spanId === untimed.span_id);
    expect(hrTimeToMilliseconds(s!.startTime)).toBe(Date.parse(step.start!));
    expect(hrTimeToMilliseconds(s!.endTime)).toBe(Date.parse(step.start!));
  });
});

describe('endpoints and resource', () => {
  it('adds /v1/traces to a base URL, keeps one that has it, refuses what is not http(s)', () => {
    expect(otlpTracesUrl('http://127.0.0.1:6006').href).toBe('http://127.0.0.1:6006/v1/traces');
    expect(otlpTracesUrl('http://127.0.0.1:6006/').href).toBe('http://127.0.0.1:6006/v1/traces');
    expect(otlpTracesUrl('https://collector.example/otlp').href).toBe('https://collector.example/otlp/v1/traces');
    expect(otlpTracesUrl('http://127.0.0.1:4318/v1/traces/').href).toBe('http://127.0.0.1:4318/v1/traces');
    expect(() => otlpTracesUrl('grpc://127.0.0.1:4317')).toThrow(EndpointError);
    expect(() => otlpTracesUrl('127.0.0.1:4318')).toThrow(EndpointError);
  });

  it('reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, OTEL_EXPORTER_OTLP_ENDPOINT as a base', () => {
    expect(endpointFromEnv({})).toBeUndefined();
    expect(endpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:6006' })?.href).toBe('http://127.0.0.1:6006/v1/traces');
    expect(endpointFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:1', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:2/custom' })?.href).toBe('http://b:2/custom');
  });

  it('OTEL_RESOURCE_ATTRIBUTES adds to the resource (e.g. the Phoenix project)', () => {
    const r = traceResource({ OTEL_RESOURCE_ATTRIBUTES: 'openinference.project.name=my%20project,deployment.environment.name=dev,broken' });
    expect(r.attributes).toMatchObject({ 'service.name': 'durable-agent-harness', 'openinference.project.name': 'my project', 'deployment.environment.name': 'dev' });
  });
});

describe('exportSpans against a receiver that says no', () => {
  const servers: Server[] = [];
  afterAll(() => servers.forEach((s) => s.close()));
  async function receiver(status: number, body: string): Promise<{ url: URL; requests: string[] }> {
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      req.resume();
      req.on('end', () => res.writeHead(status, { 'content-type': 'text/plain' }).end(body));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: otlpTracesUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), requests };
  }

  it('a non-2xx answer is a UserError naming the status, sent as protobuf to /v1/traces', async () => {
    const r = await receiver(400, 'bad spans');
    const err = await exportSpans([turn], r.url, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe(`the OTLP receiver at ${r.url.href} answered 400 Bad Request: bad spans`);
    expect((err as UserError).hint).toMatch(/OTLP\/HTTP receiver/);
    expect(r.requests).toEqual(['POST /v1/traces application/x-protobuf']);
  });

  it('a 404 hints at the base URL; credentials in the URL are not shown', async () => {
    const r = await receiver(404, 'Not Found');
    const url = new URL(r.url.href);
    url.username = 'user';
    url.password = 'secret';
    const err = (await exportSpans([turn], url, {}).catch((e: unknown) => e)) as UserError;
    expect(err.message).not.toContain('secret');
    expect(err.message).toMatch(/answered 404 Not Found$/);
    expect(err.hint).toMatch(/base URL/);
  });

  it('nothing to send sends nothing; a 2xx counts what was sent and what still runs', async () => {
    const r = await receiver(200, '');
    expect(await exportSpans([running], r.url, {})).toEqual({ sent: 0, running: 1 });
    expect(r.requests).toEqual([]);
    expect(await exportSpans([turn, running], r.url, {})).toEqual({ sent: 1, running: 1 });
    expect(r.requests).toHaveLength(1);
  });
});
