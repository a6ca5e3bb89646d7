/**
 * Which calls of a step run together (deterministic/call-groups.ts) and how a step's calls are
 * run and taken (workflows/turn/step-calls.ts): consecutive parallel-safe calls form one group,
 * any other call is a group of its own, results are taken in call order whatever order the calls
 * finish in, and a run that does not allow it (no patch) runs every call alone.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILTIN_TOOLS } from '../../deterministic/builtin-tools';
import { callGroups, runsTogether } from '../../deterministic/call-groups';
import { customToolDefinitions } from '../../deterministic/custom-tools';
import { mcpToolDefinition } from '../../deterministic/mcp-tools';
import type { McpServerRef, McpToolAnnotations, McpToolInfo } from '../../deterministic/mcp';
import { defineTool } from '../../api/define-tool';
import { ToolDefinitionError, type ToolDefinition } from '../../deterministic/tools';
import type { ToolOutcome } from '../../deterministic/activity-types';
import type { ToolResult } from '../../deterministic/types';
import type { JudgedCall } from '../../workflows/turn/judge';
import { runStepCalls } from '../../workflows/turn/step-calls';

const builtin = (name: string) => BUILTIN_TOOLS.find((t) => t.name === name)!;

describe('runsTogether', () => {
  it('holds for the built-in reads and for no built-in that changes something or runs in the workflow', () => {
    const together = BUILTIN_TOOLS.filter((t) => runsTogether(t)).map((t) => t.name);
    expect(together.sort()).toEqual(['get_current_time', 'list_files', 'read_file', 'recall', 'use_skill']);
    for (const name of ['finish', 'ask_user', 'remember', 'write_file', 'run_shell', 'http_request', 'remember_longterm']) expect(runsTogether(builtin(name))).toBe(false);
  });

  it('never holds for a tool the workflow runs itself, even one marked parallel, nor for an unknown tool', () => {
    expect(runsTogether({ parallel: true, runsIn: 'workflow' })).toBe(false);
    expect(runsTogether(undefined)).toBe(false);
  });

  it('holds for an MCP tool the server marks read-only or whose entry sets risk read_only, not for another', () => {
    const server: McpServerRef = { name: 'docs', startupTimeoutMs: 10_000, callTimeoutMs: 10_000 };
    const info = (annotations?: McpToolAnnotations): McpToolInfo => ({ server: 'docs', tool: 'search', name: 'mcp__docs__search', description: 'Searches the docs.', inputSchema: { type: 'object' }, ...(annotations ? { annotations } : {}) });
    expect(runsTogether(mcpToolDefinition(info({ readOnlyHint: true }), server))).toBe(true);
    expect(runsTogether(mcpToolDefinition(info({ idempotentHint: true }), server))).toBe(false);
    expect(runsTogether(mcpToolDefinition(info(), server))).toBe(false);
    expect(runsTogether(mcpToolDefinition(info(), { ...server, tools: { search: { risk: 'read_only' } } }))).toBe(true);
  });

  it('holds for a custom tool defined with parallel: true; the recorded spec of any other tool is what it was', () => {
    const base = { description: 'Looks a thing up somewhere.', schema: z.object({ q: z.string() }), risk: 'read_only' as const, run: () => 1 };
    const fast = defineTool({ ...base, name: 'look_up', parallel: true });
    const plain = defineTool({ ...base, name: 'plain' });
    expect(fast.parallel).toBe(true);
    expect(fast.spec).toMatchObject({ parallel: true });
    expect(plain.parallel).toBe(false);
    expect('parallel' in plain.spec).toBe(false);
    const defs = customToolDefinitions({ tools: [fast.spec, plain.spec], worker: 'w' });
    expect(defs.map((d) => [d.name, runsTogether(d)])).toEqual([
      ['look_up', true],
      ['plain', false],
    ]);
  });

  it('refuses a parallel that is not a boolean, naming the tool and the field', () => {
    const bad = () => defineTool({ name: 'odd', description: 'Does an odd thing.', schema: z.object({}), risk: 'read_only', parallel: 'yes' as never, run: () => 1 });
    expect(bad).toThrow(ToolDefinitionError);
    expect(bad).toThrow('tool "odd": parallel must be true or false');
  });
});

describe('callGroups', () => {
  const groups = (kinds: string) => callGroups([...kinds].map((k, i) => `${k}${i}`), (x) => x.startsWith('p')).map((g) => g.join(' '));

  it('puts consecutive items that run together in one group and every other item in a group of its own', () => {
    expect(groups('ppp')).toEqual(['p0 p1 p2']);
    expect(groups('pap')).toEqual(['p0', 'a1', 'p2']);
    expect(groups('ppapp')).toEqual(['p0 p1', 'a2', 'p3 p4']);
    expect(groups('aa')).toEqual(['a0', 'a1']);
    expect(groups('appa')).toEqual(['a0', 'p1 p2', 'a3']);
    expect(groups('')).toEqual([]);
  });

  it('keeps every item once, in order', () => {
    const items = [...'ppaapappp'].map((k, i) => `${k}${i}`);
    expect(callGroups(items, (x) => x.startsWith('p')).flat()).toEqual(items);
  });
});

describe('runStepCalls', () => {
  const read = builtin('read_file');
  const write = builtin('write_file');
  const judged = (specs: Array<[string, ToolDefinition, ToolResult?]>): JudgedCall[] =>
    specs.map(([id, def, result]) => ({ call: { id, name: def.name, arguments: '{}' }, def, args: {}, ...(result ? { result } : {}) }));

  /** Calls that finish when the test says so, recording when each started and was taken. */
  function harness() {
    const log: string[] = [];
    const finish = new Map<string, (r: ToolOutcome) => void>();
    const run = (j: JudgedCall) => {
      log.push(`start ${j.call.id}`);
      return new Promise<ToolOutcome>((resolve) => finish.set(j.call.id, resolve));
    };
    const take = (j: JudgedCall, r: ToolResult) => log.push(`take ${j.call.id} ${JSON.stringify(r.result)}`);
    const settle = async (id: string) => {
      for (let i = 0; i < 20 && !finish.has(id); i++) await Promise.resolve();
      finish.get(id)!({ ok: true, result: id });
    };
    return { log, run, take, settle };
  }

  it('starts the calls of a group together and takes their results in call order, whatever order they finish in', async () => {
    const h = harness();
    let asked = 0;
    const done = runStepCalls(judged([['c0', read], ['c1', read], ['c2', read]]), h.run, () => (asked++, true), h.take);
    await h.settle('c2');
    await h.settle('c0');
    await h.settle('c1');
    await done;
    expect(h.log).toEqual(['start c0', 'start c1', 'start c2', 'take c0 "c0"', 'take c1 "c1"', 'take c2 "c2"']);
    expect(asked).toBe(1);
  });

  it('runs a call that is not parallel-safe alone: its neighbours before it end first, those after it start after it', async () => {
    const h = harness();
    const done = runStepCalls(judged([['c0', read], ['c1', read], ['c2', write], ['c3', read], ['c4', read]]), h.run, () => true, h.take);
    await h.settle('c1');
    await h.settle('c0');
    await h.settle('c2');
    await h.settle('c4');
    await h.settle('c3');
    await done;
    expect(h.log).toEqual([
      'start c0', 'start c1', 'take c0 "c0"', 'take c1 "c1"',
      'start c2', 'take c2 "c2"',
      'start c3', 'start c4', 'take c3 "c3"', 'take c4 "c4"',
    ]);
  });

  it('runs every call alone when the run does not allow calls together, and never asks for a group with fewer than two calls to run', async () => {
    const h = harness();
    let asked = 0;
    const denied: ToolResult = { ok: false, error_type: 'APPROVAL_DENIED', message: 'no' };
    const first = runStepCalls(judged([['c0', read], ['c1', read, denied], ['c2', write]]), h.run, () => (asked++, true), h.take);
    await h.settle('c0');
    await h.settle('c2');
    await first;
    expect(asked).toBe(0);
    const g = harness();
    const second = runStepCalls(judged([['c0', read], ['c1', read]]), g.run, undefined, g.take);
    await g.settle('c0');
    await g.settle('c1');
    await second;
    expect(g.log).toEqual(['start c0', 'take c0 "c0"', 'start c1', 'take c1 "c1"']);
    expect(h.log).toEqual(['start c0', 'take c0 "c0"', `take c1 undefined`, 'start c2', 'take c2 "c2"']);
  });

  it('on a cancelled call takes the results before it and throws, leaving it and the later calls untaken', async () => {
    const log: string[] = [];
    const cancelled = new Error('cancelled');
    const run = async (j: JudgedCall): Promise<ToolOutcome> => {
      if (j.call.id === 'c1') throw cancelled;
      return { ok: true, result: j.call.id };
    };
    const out = runStepCalls(judged([['c0', read], ['c1', read], ['c2', read]]), run, () => true, (j) => log.push(j.call.id));
    await expect(out).rejects.toBe(cancelled);
    expect(log).toEqual(['c0']);
  });
});
