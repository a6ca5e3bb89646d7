/** HARNESS_MCP_IDLE_SEC: how long a worker keeps an unused MCP server process (each session has its own). */
import { describe, expect, it } from 'vitest';
import { mcpIdleSetting } from '../../../activities/mcp/idle-setting';

describe('mcpIdleSetting', () => {
  it('defaults to five minutes and takes seconds, decimals allowed', () => {
    expect(mcpIdleSetting({})).toEqual({ idleMs: 300_000 });
    expect(mcpIdleSetting({ HARNESS_MCP_IDLE_SEC: ' 90 ' })).toEqual({ idleMs: 90_000 });
    expect(mcpIdleSetting({ HARNESS_MCP_IDLE_SEC: '1.5' })).toEqual({ idleMs: 1_500 });
  });

  it('a bad value is one line naming the variable and the range (never 0: processes would pile up)', () => {
    for (const bad of ['0', '5m', '-3', '604801']) {
      expect(mcpIdleSetting({ HARNESS_MCP_IDLE_SEC: bad })).toEqual({ idleMs: 300_000, problem: `HARNESS_MCP_IDLE_SEC is "${bad}": give seconds, a number from 1 to 604800` });
    }
  });
});
