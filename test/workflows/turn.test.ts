import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

describe('turnWorkflow', () => {
  it('ends with final_answer when the model replies without tool calls', async () => {
    const r = await h.finish(newSessionId(), scriptedConfig({ steps: [{ content: 'Hello. HARNESS_OK' }] }), 'say hi');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Hello. HARNESS_OK');
    expect(r.steps).toBe(1);
    expect(r.usage.total_tokens).toBeGreaterThan(0);
  });
});
