/**
 * What the CLI prints of a sub-agent's wait: status's and run's pending lines name the sub-agent's
 * path, `harness pending` adds a column for it; a session's own wait prints as before.
 */
import { describe, expect, it } from 'vitest';
import { pendingLines, subAgentOf } from '../../cli/output';
import { pendingLine } from '../../cli/actions/pending';
import type { Pending } from '../../deterministic/session-state';

const agent = { turnId: 's-1/turn-1/agent-t1-s1-c0', path: ['lead', 'researcher'] };

describe("a sub-agent's wait, as the CLI prints it", () => {
  it('names the path of agents; a wait of the session itself is unchanged', () => {
    const question: Pending = { kind: 'question', callId: 't1-s1-c0', question: 'Which colour?' };
    expect(pendingLines(question, 's-1')).toEqual(['question (t1-s1-c0): Which colour?']);
    expect(pendingLines({ ...question, agent }, 's-1', 'pending ')).toEqual(['pending question of sub-agent lead › researcher (t1-s1-c0): Which colour?']);
    expect(subAgentOf({ agent })).toBe(' of sub-agent lead › researcher');
    expect(subAgentOf({})).toBe('');
    const approvals: Pending = { kind: 'approvals', calls: [{ callId: 't1-s1-c0', tool: 'file_note', args: { note: 'n' }, risk: 'write', reason: 'writes' }], agent };
    expect(pendingLines(approvals, 's-1')[0]).toMatch(/^approval of sub-agent lead › researcher t1-s1-c0: file_note/);
  });

  it('adds a sub-agent column to harness pending', () => {
    const base = { sessionId: 's-1', turnId: 's-1/turn-1', taskQueue: 'q', since: new Date(0).toISOString(), kind: 'question' as const, questionId: 't1-s1-c0', question: 'Which colour?' };
    expect(pendingLine(base, 60_000)).toBe('s-1\tquestion t1-s1-c0\tWhich colour?\ttask queue q\tasked 1 min ago');
    expect(pendingLine({ ...base, agentPath: agent.path, agentTurnId: agent.turnId }, 60_000)).toBe('s-1\tquestion t1-s1-c0\tWhich colour?\tsub-agent lead › researcher\ttask queue q\tasked 1 min ago');
  });
});
