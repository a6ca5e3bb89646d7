/**
 * The seed's architecture case through a real turn: the model reads three large source files
 * (~60,000 characters), the context is compressed before the next model call, and the goal
 * and the file paths survive (the scripted model's expectations check the compressed request).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_COMPRESSION } from '../../deterministic/context/plan';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { ARCH_GOAL, ARCH_PATHS, pySource, tsSource } from '../../bench/fixtures/conversations';
import { figure } from '../support/figures';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

describe('context compression in a turn', () => {
  it('compresses at least 6x once three large files are read, keeping the goal and the paths', async () => {
    const sessionId = newSessionId('arch');
    const src = path.join(h.home, 'workspaces', sessionId, 'src');
    mkdirSync(src, { recursive: true });
    writeFileSync(path.join(src, 'a.ts'), tsSource('a', 20_000, 1));
    writeFileSync(path.join(src, 'b.py'), pySource('b', 20_000, 2));
    writeFileSync(path.join(src, 'c.ts'), tsSource('c', 20_000, 3));
    const read = (p: string) => ({ tool_calls: [{ name: 'read_file', arguments: { path: p } }] });
    const script = {
      steps: [
        read('src/a.ts'),
        read('src/b.py'),
        read('src/c.ts'),
        { expect: { messages_contain: ARCH_GOAL }, tool_calls: [{ name: 'get_current_time', arguments: {} }] },
        { expect: { messages_contain: ARCH_PATHS[0] }, tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'UTC' } }] },
        { expect: { messages_contain: ARCH_PATHS[1] }, tool_calls: [{ name: 'list_files', arguments: {} }] },
        { expect: { messages_contain: ARCH_PATHS[2] }, content: 'Three modules: a, b and c. HARNESS_OK' },
      ],
      // What a model asked with the harness's summary prompt answers (paths and findings kept).
      summaries: [
        'Goal: explain the architecture of src/. Read src/a.ts (TypeScript: classes and exported functions), src/b.py (Python: classes, imports) and src/c.ts. Open: relate the three modules.',
      ],
    };
    const config = {
      ...scriptedConfig(script),
      compression: { ...DEFAULT_COMPRESSION, contextWindow: 30_000, outputReserve: 4_000, threshold: 0.5, keepTail: 2 },
    };
    const r = await h.finish(sessionId, config, ARCH_GOAL);
    expect(r.error ?? '').toBe('');
    expect(r.terminated_by).toBe('final_answer');
    // The session goes on with the compressed conversation: a new chain in the message store.
    expect(r.conversation?.pending).toHaveLength(0);
    expect(r.compressions).toHaveLength(1);
    const c = r.compressions![0]!;
    figure('compression-turn', `architecture case: ${c.before_tokens} -> ${c.after_tokens} tokens (${(c.before_tokens / c.after_tokens).toFixed(1)}x), ${c.summarized_messages} messages summarised, ${c.compacted_tool_results} results compacted`);
    expect(c.before_tokens / c.after_tokens).toBeGreaterThanOrEqual(6);
    expect(c.after_tokens).toBeLessThan(c.before_tokens);

    // The session keeps the compressed conversation for its next turn.
    const next = await h.turn(sessionId, config, 'And the entry point?');
    expect(next.kind).toBe('done');
  }, 60_000);

  it('does not compress a small conversation', async () => {
    const r = await h.finish(newSessionId('small'), { ...scriptedConfig({ steps: [{ content: 'hi' }] }), compression: DEFAULT_COMPRESSION }, 'hello');
    expect(r.compressions).toBeUndefined();
  });
});
