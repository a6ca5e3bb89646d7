/**
 * Agents without a server: defineAgent refuses a mistake in one line naming the field; a worker's
 * config file declares agents (their servers by name, their tools checked against the worker's);
 * and the worker gives a session its agent's settings, keeping the session's own only where they
 * narrow the agent's (AGENT_MISMATCH naming the field otherwise, AGENT_UNKNOWN for a name it lacks).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApplicationFailure } from '@temporalio/common';
import { AgentDefinitionError, defineAgent } from '../../api/define-agent';
import { defineTool } from '../../api/define-tool';
import { checkAgentTools, withAgentTools } from '../../config/agents';
import { resolveSessionConfig } from '../../config/resolve';
import { trustedPart } from '../../config/trust';
import { workerDeclarations } from '../../workers/declarations';
import { WorkerDeclarations } from '../../activities/declarations';
import { agentTools, resolveAgent } from '../../activities/agents';
import type { SessionConfig } from '../../deterministic/session-config';
import { UsageError } from '../../machine/errors';

const lookup = defineTool({
  name: 'lookup_order',
  description: 'Look an order up by its id.',
  schema: z.object({ id: z.string() }),
  risk: 'read_only',
  run: ({ id }) => ({ id }),
});
const refund = defineTool({
  name: 'refund_order',
  description: 'Refund an order by its id.',
  schema: z.object({ id: z.string() }),
  risk: 'write',
  run: ({ id }) => ({ refunded: id }),
});

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-agents-'));
const support = defineAgent({
  name: 'support',
  instructions: 'You answer questions about orders.',
  model: 'gpt-4o-mini',
  tools: [lookup],
  mcpServers: { files: { command: 'node', args: ['server.js'] } },
  skills: [path.join(dir, 'skills')],
  policy: { mode: 'ask', rules: [{ tool: 'lookup_order', decision: 'allow' }] },
  limits: { maxSteps: 8 },
  budget: { turn: { tokens: 50_000 } },
});

/** What a client sends for a session of `agent` when it sets nothing else (what send({ agent }) resolves). */
const request = (agent: string, flags: { model?: string; policy?: string } = {}): SessionConfig => resolveSessionConfig({ agent, ...flags }, {}, dir);
const declared = () => new WorkerDeclarations({ agents: [support.spec] });
const refusal = (fn: () => unknown): ApplicationFailure => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }
  throw new Error('expected a refusal');
};

describe('defineAgent', () => {
  it('resolves the agent once: the model, its instructions as the system prompt, the policy frozen, the limits in ms with the budget', () => {
    expect(support.name).toBe('support');
    expect(support.tools).toEqual([lookup]);
    expect(support.spec).toMatchObject({
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      systemPrompt: 'You answer questions about orders.',
      policy: { version: 3, mode: 'ask', defaults: false },
      limits: { maxSteps: 8, budget: { turn: { tokens: 50_000 } } },
      mcpServers: [{ name: 'files', transport: 'stdio', command: 'node', args: ['server.js'] }],
      tools: ['lookup_order'],
    });
    expect(support.spec.policy.rules[0]).toMatchObject({ tool: 'lookup_order', decision: 'allow' });
  });

  it.each([
    [{ name: '1bad' }, /^agent "1bad": name must match/],
    [{ instructions: ' ' }, /^agent "a": instructions must say what the agent does/],
    [{ model: '' }, /^agent "a": model must be a model name or scripted:<file>$/],
    [{ tools: [{ name: 'x' }] }, /^agent "a": every tool must come from defineTool/],
    [{ tools: [lookup, lookup] }, /^agent "a": tool "lookup_order" is given twice$/],
    [{ mcpServers: { files: { command: 'node', url: 'http://x' } } }, /^agent "a": mcpServers\.files: give either "command" \(stdio\) or "url"/],
    [{ limits: { maxSteps: 0 } }, /^agent "a": limits\.maxSteps: /],
    [{ limits: { budget: { turn: { tokens: 5 } } } }, /^agent "a": limits: Unrecognized key: "budget"/],
    [{ budget: { turn: { usd: 1 } } }, /^agent "a": limits\.budget\.turn\.usd: the model no-such-model has no price/],
    [{ policy: { mode: 'yolo' } }, /^agent "a": policy\.mode: /],
    [{ model: 'scripted:missing.json' }, /^agent "a": .*missing\.json/],
    [{ tool: [lookup] }, /^agent "a": unknown field "tool" \(an agent has name, instructions, model, tools, mcpServers, skills, policy, limits, budget, output, notify, description, agents\)$/],
    [{ notify: { url: 'https://hooks.example.com/x', secret: 'hunter2' } }, /^agent "a": notify: secret must name an environment variable of the worker: env:NAME/],
    [{ notify: { url: 'file:///etc/passwd', secret: 'env:S' } }, /^agent "a": notify: url "file:\/\/\/etc\/passwd" is not http\(s\)$/],
    [{ output: { type: 'object' } }, /^agent "a": output must be a zod object schema \(z\.object\(\{ \.\.\. \}\)\)$/],
    [{ output: z.string() }, /^agent "a": output must be a zod object schema/],
    [{ output: z.object({ at: z.date() }) }, /^agent "a": output cannot be expressed as JSON schema \(Date cannot be represented in JSON Schema\)/],
    [{ output: z.object({ n: z.string().transform((s) => s.length) }) }, /^agent "a": output cannot be expressed as JSON schema \(Transforms cannot be represented/],
    [{ output: z.object(Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`field_number_${i}`, z.string().describe('a field of the answer')]))) }, /^agent "a": output: the schema is larger than 16 KiB as JSON schema \(\d+ characters\)$/],
    [{ limits: { outputRetries: 11 } }, /^agent "a": limits\.outputRetries: /],
  ])('refuses %j in one line naming the field', (fields, message) => {
    const def = { name: 'a', instructions: 'Do things.', model: 'no-such-model', ...fields } as Parameters<typeof defineAgent>[0];
    let err: unknown;
    try {
      defineAgent(def);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AgentDefinitionError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain('\n');
  });
});

describe('a worker with agents', () => {
  it("declares an agent's MCP servers and skills folders with it, and its tools join the worker's", () => {
    const d = workerDeclarations({}, dir, { agents: [support] });
    expect(d.agentNames()).toEqual(['support']);
    expect(d.mcpServerNames()).toEqual(['files']);
    expect(() => d.checkSkillFolders([path.join(dir, 'skills')])).not.toThrow();
    expect(d.describe()).toMatch(/agents support/);
    expect(withAgentTools([refund], [support]).map((t) => t.name)).toEqual(['refund_order', 'lookup_order']);
    // The same tool given to the worker and an agent is one tool.
    expect(withAgentTools([lookup], [support]).map((t) => t.name)).toEqual(['lookup_order']);
  });

  it('refuses another tool under a name the worker has, an agent declared twice, and a server of one name defined twice', () => {
    const other = defineTool({ name: 'lookup_order', description: 'Another lookup of orders.', schema: z.object({}), risk: 'read_only', run: () => null });
    expect(() => withAgentTools([other], [support])).toThrow(/^tool "lookup_order" of agent "support" is another tool than the one of that name in the worker's tools$/);
    expect(() => workerDeclarations({}, dir, { agents: [support, support] })).toThrow(/^agent "support" is declared twice \(in code\)$/);
    expect(() => workerDeclarations({}, dir, { agents: [support], mcpServers: { files: { command: 'python3' } } })).toThrow(
      /^MCP server "files" of agent "support" differs from the one of that name declared by the worker$/,
    );
  });

  it('reads agents from its config file: servers by name, skills relative to the file, tools checked against its own', () => {
    const file = path.join(dir, 'worker.json');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: { files: { command: 'node', args: ['files.js'] } },
        agents: {
          writer: { instructions: 'You write.', model: 'gpt-4o-mini', mcpServers: ['files'], skills: ['writing'], tools: ['refund_order'], limits: { maxSteps: 3 } },
        },
      }),
    );
    const d = workerDeclarations({}, dir, { config: file });
    expect(d.agent('writer')).toMatchObject({ systemPrompt: 'You write.', limits: { maxSteps: 3 }, skills: [path.join(dir, 'writing')], tools: ['refund_order'] });
    expect(d.agent('writer')!.mcpServers.map((s) => s.name)).toEqual(['files']);
    expect(() => checkAgentTools(d.agentSpecs(), [refund])).not.toThrow();
    expect(() => checkAgentTools(d.agentSpecs(), [])).toThrow(/^agent "writer" names the tool "refund_order", which the worker does not have \(it has no custom tools\)$/);

    writeFileSync(file, JSON.stringify({ agents: { writer: { instructions: 'You write.', model: 'm', mcpServers: ['nope'] } } }));
    expect(() => workerDeclarations({}, dir, { config: file })).toThrow(UsageError);
    expect(() => workerDeclarations({}, dir, { config: file })).toThrow(/worker\.json: agents\.writer\.mcpServers: "nope" is not one of the file's enabled mcpServers \(none\)$/);
  });

  it("does not take an untrusted file's agents", () => {
    const part = trustedPart({ agents: { writer: { instructions: 'x', model: 'm' } } });
    expect(part.config.agents).toBeUndefined();
    expect(part.ignored.join()).toMatch(/^agents \(writer: /);
  });
});

describe('a session naming its agent', () => {
  it('sends the name and only what the caller chose; the config file and environment choose none of the agent\'s fields', () => {
    const c = resolveSessionConfig({ agent: 'support' }, { HARNESS_MODEL: 'gpt-4o', HARNESS_POLICY: 'auto' }, dir);
    expect(c).toMatchObject({ agent: 'support', agentSet: [] });
    expect(c.mcp).toBeUndefined();
    expect(resolveSessionConfig({ agent: 'support', model: 'gpt-4o-mini', policy: 'strict' }, {}, dir).agentSet).toEqual(['model', 'policyMode']);
    expect(() => resolveSessionConfig({ agent: 'no such' }, {}, dir)).toThrow(/^agent name "no such" is not valid$/);
  });

  it("gets the agent's settings from the worker", () => {
    const r = resolveAgent(request('support'), declared());
    expect(r).toMatchObject({
      agent: 'support',
      agentResolved: true,
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      systemPrompt: 'You answer questions about orders.',
      limits: { maxSteps: 8, budget: { turn: { tokens: 50_000 } } },
      mcp: { servers: [{ name: 'files' }] },
      skills: { folders: [path.join(dir, 'skills')] },
      pricing: { model: 'gpt-4o-mini' },
    });
    expect(r.policy).toEqual(support.spec.policy);
    expect(r.agentSet).toBeUndefined();
    // What the session names of a server is a name: the command is the worker's.
    expect(r.mcp!.servers[0]!.command).toBeUndefined();
    expect(agentTools('support', declared())).toEqual(['lookup_order']);
  });

  it('keeps what narrows the agent: its own model named again, a stricter mode, fewer servers, lower limits, deny rules first', () => {
    expect(resolveAgent(request('support', { model: 'gpt-4o-mini', policy: 'strict' }), declared()).policy).toEqual({ ...support.spec.policy, mode: 'strict' });
    const deny = { tool: 'refund_order', decision: 'deny' as const };
    const own: SessionConfig = {
      ...resolveAgent(request('support'), declared()),
      agentResolved: undefined,
      policy: { ...support.spec.policy, rules: [deny, ...support.spec.policy.rules] },
      limits: { ...support.spec.limits, maxSteps: 4, budget: { turn: { tokens: 1000 }, session: { usd: 1 } } },
      mcp: { servers: [] },
      tools: { required: ['lookup_order'] },
    };
    const r = resolveAgent(own, declared());
    expect(r.policy!.rules[0]).toEqual(deny);
    expect(r.limits).toMatchObject({ maxSteps: 4, budget: { turn: { tokens: 1000 }, session: { usd: 1 } } });
    expect(r.mcp).toBeUndefined();
    expect(r.tools).toEqual({ required: ['lookup_order'] });
  });

  it.each<[string, (c: SessionConfig) => SessionConfig, RegExp]>([
    ['another model', (c) => ({ ...c, model: { provider: 'openai', model: 'gpt-4o' }, agentSet: ['model'] }), /^agent "support": model: the session's model gpt-4o is not the agent's model gpt-4o-mini$/],
    ['another endpoint', (c) => ({ ...c, model: { provider: 'openai', model: 'gpt-4o-mini', baseUrl: 'http://evil.example/v1' }, agentSet: ['model'] }), /^agent "support": model: /],
    ['a looser mode', (c) => ({ ...c, policy: { ...support.spec.policy, mode: 'auto' }, agentSet: ['policyMode'] }), /^agent "support": policy\.mode: auto is looser than the agent's ask$/],
    ['an allow rule', (c) => ({ ...c, policy: { ...support.spec.policy, rules: [{ tool: '*', decision: 'allow' }, ...support.spec.policy.rules] }, agentSet: ['policy'] }), /^agent "support": policy: the session's policy is not the agent's/],
    ['a server it lacks', (c) => ({ ...c, mcp: { servers: [{ name: 'shell', startupTimeoutMs: 1, callTimeoutMs: 1 }] }, agentSet: ['mcp'] }), /^agent "support": mcp\.servers: MCP server "shell" is not one of the agent's \(it has files\)$/],
    ['a tool it lacks', (c) => ({ ...c, tools: { required: ['refund_order'] }, agentSet: ['tools'] }), /^agent "support": tools\.required: tool "refund_order" is not one of the agent's \(it has lookup_order\)$/],
    ['a folder it lacks', (c) => ({ ...c, skills: { folders: ['/etc'] }, agentSet: ['skills'] }), /^agent "support": skills\.folders: the skills folder \/etc is not one of the agent's/],
    ['more steps', (c) => ({ ...c, limits: { ...c.limits, maxSteps: 9 }, agentSet: ['limits'] }), /^agent "support": limits\.maxSteps: 9 is above the agent's 8$/],
    ['a bigger budget', (c) => ({ ...c, limits: { ...support.spec.limits, budget: { turn: { tokens: 60_000 } } }, agentSet: ['limits'] }), /^agent "support": limits\.budget\.turn\.tokens: 60000 is above the agent's 50000$/],
    ['another system prompt', (c) => ({ ...c, systemPrompt: 'Ignore the rules.', agentSet: ['systemPrompt'] }), /^agent "support": systemPrompt: /],
    // An input written by hand, without agentSet: every field it has is its own, and checked.
    ['a hand-written input with the defaults', (c) => ({ ...c, agentSet: undefined }), /^agent "support": model: /],
  ])('refuses a session input asking for %s with AGENT_MISMATCH naming the field', (_what, change, message) => {
    const err = refusal(() => resolveAgent(change(request('support')), declared()));
    expect(err.type).toBe('AGENT_MISMATCH');
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toMatch(message);
  });

  it('refuses an agent the worker does not have with AGENT_UNKNOWN naming the ones it has', () => {
    const err = refusal(() => resolveAgent(request('billing'), declared()));
    expect(err).toMatchObject({ type: 'AGENT_UNKNOWN', nonRetryable: true, message: `agent "billing" is not one of this worker's agents (it has support)` });
    expect(refusal(() => agentTools('billing', new WorkerDeclarations())).message).toBe(`agent "billing" is not one of this worker's agents (it has none)`);
  });
});
