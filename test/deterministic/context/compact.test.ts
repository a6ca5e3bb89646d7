import { describe, expect, it } from 'vitest';
import { COMPACTED_MARK, compactRecord, compactToolResults, structureLines, toolText, truncateText } from '../../../deterministic/context/compact';
import type { ChatMessage } from '../../../deterministic/types';
import { call, pySource, readFileResult, tsSource } from '../../../bench/fixtures/conversations';

const opts = { minChars: 2_000, maxRecordChars: 1_600 };

describe('compaction of tool results', () => {
  it('finds imports, classes, functions, interfaces and headings with language-agnostic patterns', () => {
    const lines = structureLines(
      ['# Title', 'import os', 'from a.b import c', "import { x } from './x';", 'export class A {', '  async load(id: string): Promise<void> {', 'def run(self):', 'export interface B {', 'type C = string;', 'const f = (a: number) => a;', '  if (x) {', 'plain text'].join('\n'),
    );
    expect(lines).toEqual([
      '1: # Title',
      '2: import os',
      '3: from a.b import c',
      "4: import { x } from './x';",
      '5: export class A {',
      '6:   async load(id: string): Promise<void> {',
      '7: def run(self):',
      '8: export interface B {',
      '9: type C = string;',
      '10: const f = (a: number) => a;',
    ]);
  });

  it('reads the text inside a ToolResult and keeps its small fields', () => {
    const t = toolText(readFileResult('src/a.ts', 'line1\nline2'));
    expect(t.text).toBe('line1\nline2');
    expect(t.ok).toBe(true);
    expect(t.fields).toMatchObject({ path: 'src/a.ts', bytes: 11 });
    expect(toolText('not json').text).toBe('not json');
  });

  it('records the tool, the path, the original size, structure and head and tail snippets', () => {
    const source = tsSource('a.ts', 20_000, 7);
    const content = readFileResult('src/a.ts', source);
    const record = compactRecord(content, call('c1', 'read_file', { path: 'src/a.ts' }), opts);
    expect(record.startsWith(`${COMPACTED_MARK} read_file path=src/a.ts`)).toBe(true);
    expect(record).toContain(`original: ${content.length} chars`);
    expect(record).toContain('structure (');
    expect(record).toContain("import { logger } from '../lib/logger';");
    expect(record).toMatch(/export class \w+Service extends EventEmitter/);
    expect(record).toContain('head:\n// a.ts');
    expect(record).toContain('tail:\n');
    expect(record.length).toBeLessThanOrEqual(opts.maxRecordChars);
  });

  it('keeps the assistant/tool structure and ids while shrinking large results only', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'goal' },
      { role: 'assistant', content: null, tool_calls: [call('c1', 'read_file', { path: 'b.py' }), call('c2', 'run_shell', { command: 'ls -la' })] },
      { role: 'tool', tool_call_id: 'c1', content: readFileResult('b.py', pySource('b.py', 10_000, 3)) },
      { role: 'tool', tool_call_id: 'c2', content: '{"ok":true,"result":{"exit_code":0,"stdout":"a\\nb"}}' },
    ];
    const { messages: out, compacted } = compactToolResults(messages, opts);
    expect(out.map((m) => m.role)).toEqual(messages.map((m) => m.role));
    expect(out[2]).toBe(messages[2]);
    expect(out[4]).toBe(messages[4]);
    expect(out[3]).toMatchObject({ role: 'tool', tool_call_id: 'c1' });
    expect((out[3].content ?? '').length).toBeLessThan((messages[3].content ?? '').length / 5);
    expect(out[3].content).toMatch(/\d+: class \w+Job:/);
    expect(out[3].content).toMatch(/\d+: def load_\w+\(path: str\)/);
    expect(compacted).toEqual([
      { tool_call_id: 'c1', tool: 'read_file', target: 'path=b.py', original_chars: messages[3].content!.length, compacted_chars: out[3].content!.length },
    ]);
    // Compaction is idempotent: a compacted record is left alone.
    expect(compactToolResults(out, { minChars: 100, maxRecordChars: 80 }).compacted).toEqual([]);
  });

  it('never produces a record longer than what it replaces, even with tiny budgets', () => {
    for (const size of [101, 150, 300, 2_500]) {
      const content = 'x'.repeat(size);
      const record = compactRecord(content, call('c', 'run_shell', { command: 'cat big.log' }), { minChars: 100, maxRecordChars: 5_000 });
      expect(record.length).toBeLessThan(content.length);
    }
  });

  it('truncates hard around a marker while keeping head and tail', () => {
    const text = `${'a'.repeat(500)}${'z'.repeat(500)}`;
    const cut = truncateText(text, 200);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut.startsWith('aaa')).toBe(true);
    expect(cut.endsWith('zzz')).toBe(true);
    expect(cut).toContain('[truncated 1000 chars]');
    expect(truncateText('short', 200)).toBe('short');
  });
});
