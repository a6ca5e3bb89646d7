/**
 * The request prefix a provider caches (the system message and the tool definitions) is the same
 * bytes at every step of a turn, in the next turn and after a compression; memory, which changes
 * during a session, goes after the conversation. A run recorded before the layout (the
 * `cache-prefix` patch not taken) keeps memory in the system message.
 */
import { describe, expect, it } from 'vitest';
import type { ModelCallInput, ModelReply } from '../../deterministic/activity-types';
import { builtinRegistry } from '../../deterministic/builtin-tools';
import { parsePolicy } from '../../deterministic/policy/schema';
import { DEFAULT_LIMITS } from '../../deterministic/session-config';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import type { ChatMessage, ToolCall } from '../../deterministic/types';
import { compressContext } from '../../activities/compress/compress';
import { createToolSpecs } from '../../activities/tool-specs';
import type { Conversations } from '../../activities/store/conversations';
import { runTurn, type TurnOps } from '../../workflows/turn/loop';
import { StoredConversation } from '../../workflows/turn/conversation';
import { EMPTY_CONVERSATION } from '../../deterministic/conversation';

const specs = createToolSpecs(builtinRegistry().specs(), {} as Conversations);
const PROMPT = 'You are a careful agent. Use the tools.';
const SKILLS = '## Skills\n- deploy: how to deploy';

/** A reply that calls one tool. */
function calling(name: string, args: Record<string, unknown>, id: string): ModelReply {
  const call: ToolCall = { id, name, arguments: JSON.stringify(args) };
  return { content: null, toolCalls: [call], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, model: 'm', attempt: 1, latencyMs: 0 };
}
const answer = (text: string): ModelReply => ({ content: text, toolCalls: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, model: 'm', attempt: 1, latencyMs: 0 });

interface Sent {
  input: ModelCallInput;
  prefix: string;
}

/** One inline turn with scripted replies; what each model call sent, and the prefix bytes a provider caches. */
async function turn(n: number, prior: { history: ChatMessage[]; memory: Record<string, string> }, replies: ModelReply[], extra: { memories?: string[]; compress?: boolean; cachePrefix?: boolean } = {}) {
  const sent: Sent[] = [];
  const input: TurnInput = {
    sessionId: 's1',
    turn: n,
    turnId: `s1/turn-${n}`,
    config: {
      model: { provider: 'openai', model: 'gpt-4o-mini' },
      systemPrompt: PROMPT,
      limits: { ...DEFAULT_LIMITS, maxSteps: 10 },
      ...(extra.compress ? { compression: { contextWindow: 2_000, threshold: 50, outputReserve: 100, keepTail: 2, compactToolResultsOver: 200 } } : {}),
    },
    history: prior.history,
    memory: prior.memory,
    userMessage: `message ${n}`,
    modelCallBase: 0,
  };
  const ops: TurnOps = {
    callModel: async (req) => {
      const tools = await specs(req);
      sent.push({ input: req, prefix: JSON.stringify({ system: req.messages![0], tools }) });
      return replies.shift()!;
    },
    executeTool: async (call) => ({ ok: true, result: { ran: call.name, text: 'x'.repeat(600) } }),
    askUser: async () => undefined,
    awaitApprovals: async () => new Map(),
    compressContext: async (req) => compressContext({ messages: req.messages!, model: 'gpt-4o-mini', config: req.config, date: '2026-01-01', force: true }, { summarize: async () => 'what happened', count: (m) => JSON.stringify(m).length / 4 }),
    ...(extra.cachePrefix === undefined ? {} : { cachePrefix: () => extra.cachePrefix! }),
  };
  const result = (await runTurn(input, ops, { policy: parsePolicy(undefined), context: { skillsIndex: SKILLS, ...(extra.memories ? { memories: extra.memories } : {}) } })) as TurnResult;
  const history = result.replacesHistory ? result.messages! : [...prior.history, ...result.messages!];
  return { sent, result, next: { history, memory: result.memory } };
}

describe('the cached prefix of model requests', () => {
  it('is byte-identical across steps, turns and a compression; memory goes after the conversation', async () => {
    const one = await turn(1, { history: [], memory: {} }, [
      calling('remember', { key: 'colour', value: 'zebra-blue' }, 'c1'),
      calling('get_current_time', { timezone: 'UTC' }, 'c2'),
      calling('remember', { key: 'size', value: 'mammoth-size' }, 'c3'),
      answer('done'),
    ]);
    const two = await turn(2, one.next, [calling('get_current_time', { timezone: 'UTC' }, 'd1'), answer('done again')], { memories: ['2026-01-01: deploys go through staging'], compress: true });
    expect(two.result.compressions?.length).toBeGreaterThan(0);
    const all = [...one.sent, ...two.sent];
    expect(all).toHaveLength(6);
    const prefix = all[0]!.prefix;
    for (const s of all) expect(s.prefix).toBe(prefix);
    // The prefix holds the prompt, the skills and the tools, none of what a step or a turn adds.
    expect(prefix).toContain('careful agent');
    expect(prefix).toContain('deploy: how to deploy');
    for (const per of ['colour', 'mammoth-size', 'zebra-blue', 'staging', 'message 1', 'Working memory']) expect(prefix).not.toContain(per);
    // Memory is the last message, after the conversation, once there is any.
    expect(one.sent[0]!.input.messages!.at(-1)).toEqual({ role: 'user', content: 'message 1' });
    const last = one.sent[1]!.input.messages!.at(-1)!;
    expect(last.role).toBe('system');
    expect(last.content).toContain('- colour: zebra-blue');
    expect(two.sent[0]!.input.messages!.at(-1)!.content).toContain('deploys go through staging');
    // The notes are never part of the conversation the turn keeps.
    for (const m of two.next.history) expect(m.content ?? '').not.toContain('Working memory');
    // Each step's messages start with the previous step's (all but their trailing notes): the cache serves them too.
    for (let i = 1; i < one.sent.length; i++) {
      const before = one.sent[i - 1]!.input.messages!.filter((m) => !(m.role === 'system' && m.content.includes('Working memory')));
      expect(one.sent[i]!.input.messages!.slice(0, before.length)).toEqual(before);
    }
  });

  it('keeps memory in the system message in a run recorded before the layout', async () => {
    const old = await turn(1, { history: [], memory: { colour: 'blue' } }, [answer('done')], { cachePrefix: false });
    const messages = old.sent[0]!.input.messages!;
    expect(messages[0]!.content).toContain('- colour: blue');
    expect(messages.filter((m) => m.role === 'system')).toHaveLength(1);
  });

  it('sends the notes by reference once the store has them, and the system text only when it changed', () => {
    const c = new StoredConversation(EMPTY_CONVERSATION);
    const first = c.context('system', 'memory A') as { system: { text?: string }; notes?: { hash: string; text?: string } };
    expect(first.system.text).toBe('system');
    expect(first.notes?.text).toBe('memory A');
    c.replied({ ...answer('x'), conversation: { ...EMPTY_CONVERSATION } }, { role: 'assistant', content: 'x' });
    const same = c.context('system', 'memory A') as typeof first;
    expect(same.system.text).toBeUndefined();
    expect(same.notes).toEqual({ hash: first.notes!.hash });
    const changed = c.context('system', 'memory B') as typeof first;
    expect(changed.system.text).toBeUndefined();
    expect(changed.notes?.text).toBe('memory B');
    expect('notes' in c.context('system')).toBe(false);
  });
});
