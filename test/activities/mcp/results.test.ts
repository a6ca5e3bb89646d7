import { describe, expect, it } from 'vitest';
import { McpConfigError } from '../../../activities/mcp/errors';
import { specKey } from '../../../activities/mcp/pool-key';
import { mapTools, MAX_DESCRIPTION_CHARS, MAX_TOOL_SET_CHARS, MAX_TOOLS_PER_SERVER, withinToolSet } from '../../../activities/mcp/tool-list';
import { base64Bytes, MAX_STRUCTURED_CHARS, MAX_TEXT_CHARS, mcpResultToToolResult } from '../../../activities/mcp/results';
import { resolveTemplates } from '../../../activities/mcp/templates';
import { everythingStdio } from '../../support/mcp-servers';

describe('mcpResultToToolResult', () => {
  it('joins text, describes media and blobs by size, keeps embedded text and links', () => {
    const png = Buffer.alloc(100, 7).toString('base64');
    const r = mcpResultToToolResult('s', 't', {
      content: [
        { type: 'text', text: 'first' },
        { type: 'image', data: png, mimeType: 'image/png' },
        { type: 'audio', data: Buffer.alloc(10).toString('base64'), mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'embedded' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', mimeType: 'application/octet-stream', blob: Buffer.alloc(5).toString('base64') } },
        { type: 'resource_link', uri: 'file:///c', name: 'c' },
        { type: 'text', text: 'second' },
      ],
    });
    expect(r).toEqual({
      ok: true,
      result: {
        content: 'first\nsecond',
        resources: [
          { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'embedded' },
          { uri: 'file:///c', name: 'c' },
        ],
        media: [
          { type: 'image', mimeType: 'image/png', bytes: 100 },
          { type: 'audio', mimeType: 'audio/wav', bytes: 10 },
          { type: 'resource', uri: 'file:///b.bin', mimeType: 'application/octet-stream', bytes: 5 },
        ],
      },
    });
    expect(JSON.stringify(r)).not.toContain(png);
  });

  it('caps an error to 2000 characters, and names the tool when the server gave no text', () => {
    const long = mcpResultToToolResult('s', 't', { content: [{ type: 'text', text: 'x'.repeat(5000) }], isError: true });
    expect(long).toMatchObject({ ok: false, error_type: 'MCP_TOOL_ERROR', suggestion: 'read the error and fix the arguments, or use another tool' });
    expect(long.message!.startsWith('x'.repeat(2000))).toBe(true);
    expect(long.message!.length).toBeLessThan(2100);
    expect(mcpResultToToolResult('s', 't', { content: [], isError: true }).message).toBe('t on s reported an error without a message');
  });

  it('counts base64 bytes with and without padding', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 99]) expect(base64Bytes(Buffer.alloc(n).toString('base64'))).toBe(n);
  });
});

describe('resolveTemplates', () => {
  it('replaces ${NAME} only', () => {
    expect(resolveTemplates({ A: '${X}-${Y_1}', B: '$X ${ X} ${1X}' }, { X: 'x', Y_1: 'y' }, 's', 'env')).toEqual({ A: 'x-y', B: '$X ${ X} ${1X}' });
  });
  it('names server, field and variable when one is missing', () => {
    expect(() => resolveTemplates({ Authorization: 'Bearer ${TOKEN}' }, {}, 'gh', 'header')).toThrow(McpConfigError);
    expect(() => resolveTemplates({ Authorization: 'Bearer ${TOKEN}' }, {}, 'gh', 'header')).toThrow(
      "mcp server gh: header Authorization uses ${TOKEN}, which is not set in the worker's environment",
    );
  });
});

describe('mapTools and specKey', () => {
  const schema = { type: 'object' as const, properties: {} };
  it('skips names providers refuse, clashes after sanitising, and non-object schemas', () => {
    const { tools, skipped } = mapTools('srv', [
      { name: 'a.b', inputSchema: schema, description: 'dots', annotations: { readOnlyHint: true } },
      { name: 'a_b', inputSchema: schema },
      { name: 'x'.repeat(70), inputSchema: schema },
      { name: 'weird', inputSchema: { type: 'string' } },
      { name: 'bad-annotations', inputSchema: schema, annotations: 'nope' },
      { name: 'task-only', inputSchema: schema, execution: { taskSupport: 'required' } },
      { inputSchema: schema },
    ]);
    expect(tools).toEqual([{ server: 'srv', tool: 'a.b', name: 'mcp__srv__a_b', description: 'dots', inputSchema: schema, annotations: { readOnlyHint: true } }]);
    expect(skipped).toEqual([
      'a_b: clashes with a.b as mcp__srv__a_b',
      expect.stringMatching(/^x+: mcp__srv__x+ is not a valid tool name/),
      'weird: input schema is not an object',
      expect.stringMatching(/^bad-annotations: invalid definition \(annotations: /),
      'task-only: runs only as a task (not supported)',
      expect.stringMatching(/^\(no name\): /),
    ]);
  });
  it('keys connections by how the server starts, not by key order or policy', () => {
    const a = everythingStdio({ env: { A: '1', B: '2' } });
    const b = { ...everythingStdio({ env: { B: '2', A: '1' } }), risk: 'read_only' as const, callTimeoutMs: 1 };
    expect(specKey(a)).toBe(specKey(b));
    expect(specKey(a)).not.toBe(specKey(everythingStdio({ env: { A: '1' } })));
  });
});

describe('what a hostile server can put into a session is bounded', () => {
  it('a huge text result keeps head and tail, huge structured content is cut, long lists are capped', () => {
    const text = `HEAD${'x'.repeat(3_000_000)}TAIL`;
    const links = Array.from({ length: 1000 }, (_, i) => ({ type: 'resource_link' as const, uri: `file:///${i}`, name: String(i) }));
    const r = mcpResultToToolResult('s', 't', { content: [{ type: 'text', text }, ...links], structuredContent: { blob: 'y'.repeat(1_000_000) } });
    const out = (r as { result: { content: string; structured: { chars: number }; resources: unknown[] } }).result;
    expect(out.content.length).toBeLessThan(MAX_TEXT_CHARS + 200);
    expect(out.content.startsWith('HEAD')).toBe(true);
    expect(out.content.endsWith('TAIL')).toBe(true);
    expect(out.content).toMatch(/characters left out/);
    expect(out.structured.chars).toBeGreaterThan(1_000_000);
    expect(JSON.stringify(out.structured).length).toBeLessThan(MAX_STRUCTURED_CHARS + 200);
    expect(out.resources).toHaveLength(100);
  });

  it('a flood of tools, giant schemas and descriptions is cut down with reasons', () => {
    const tools = Array.from({ length: 300 }, (_, i) => ({ name: `t${i}`, description: 'd'.repeat(10_000), inputSchema: { type: 'object', properties: {} } }));
    tools[0] = { name: 'giant', description: 'x', inputSchema: { type: 'object', properties: { a: { type: 'string', description: 'z'.repeat(40_000) } } } };
    const { tools: kept, skipped } = mapTools('s', tools);
    expect(kept).toHaveLength(MAX_TOOLS_PER_SERVER);
    expect(kept.every((t) => t.description.length <= MAX_DESCRIPTION_CHARS + 1)).toBe(true);
    expect(skipped).toEqual([expect.stringMatching(/^giant: input schema larger than/), `${300 - 1 - MAX_TOOLS_PER_SERVER} more: more than ${MAX_TOOLS_PER_SERVER} tools on this server`]);
  });

  it('the reasons for tools left out are few and short, however many tools and however long their names', () => {
    const tools = Array.from({ length: 5000 }, (_, i) => ({ name: `${'n'.repeat(10_000)}${i}`, inputSchema: { type: 'object' } }));
    const { tools: kept, skipped } = mapTools('s', tools);
    expect(kept).toEqual([]);
    expect(skipped.length).toBeLessThanOrEqual(21);
    expect(skipped.at(-1)).toBe('4980 more left out for the reasons above or others');
    expect(Math.max(...skipped.map((s) => s.length))).toBeLessThan(400);
  });

  it("a session's servers together offer at most MAX_TOOL_SET_CHARS of tools, in the session's order, saying what was left out", () => {
    const server = (name: string, n: number, pad: number) => {
      const { tools } = mapTools(name, Array.from({ length: n }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object', properties: { p: { description: 'p'.repeat(pad) } } } })));
      return { tools, status: { server: name, status: 'connected' as const, tools: tools.length } };
    };
    const [a, b, c] = withinToolSet([server('a', 100, 4000), server('b', 100, 4000), server('c', 3, 10)]);
    const size = JSON.stringify([...a!.tools, ...b!.tools, ...c!.tools]).length;
    expect(size).toBeLessThanOrEqual(MAX_TOOL_SET_CHARS);
    expect(a!.tools).toHaveLength(100);
    expect(b!.tools.length).toBeLessThan(100);
    expect(b!.status).toMatchObject({ tools: b!.tools.length, skipped: [expect.stringMatching(/ more \(t\d+ …\): the session's MCP tool list would pass 512 KiB$/)] });
    // A later server's small tools still fit in what is left.
    expect(c!.tools).toHaveLength(3);
  });
});
