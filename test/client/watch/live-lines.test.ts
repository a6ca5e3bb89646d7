import { describe, expect, it } from 'vitest';
import { liveLine } from '../../../client/watch/live-lines';
import type { Span } from '../../../history/trace/types';
import { escapeForTerminal } from '../../../machine/terminal/escape';
import { plainString } from '../../../machine/terminal/text';

/** An approval span as the live watcher reports it when the turn starts to wait. */
function approvalOpened(args: unknown): Span {
  return {
    trace_id: 't', session_id: 's-1', span_id: 'a', parent_id: 'c', type: 'approval', name: 'approval ops_exec',
    start: null, end: null, duration_ms: null, status: 'running',
    input: { call_id: 't1-s2-c0', tool: 'ops_exec', args, rule: 'mode ask' }, output: null, error: null,
  };
}

describe('the live line of a call that waits for approval', () => {
  it('shows every argument, not the command alone', () => {
    const line = liveLine({ change: 'opened', span: approvalOpened({ command: 'uptime', host: 'prod-db-1', env: { LD_PRELOAD: '/tmp/evil.so' } }) }, { escape: escapeForTerminal, color: false });
    expect(plainString(line!)).toBe('step 2 · waiting for approval: ops_exec uptime (rule mode ask)\n    host: "prod-db-1"\n    env: {"LD_PRELOAD":"/tmp/evil.so"}');
  });

  it('shows a long value by its size and the command that prints it whole, escaped', () => {
    const line = liveLine({ change: 'opened', span: approvalOpened({ path: 'a\u202e.txt', content: { $blob: 'h', bytes: 5000, preview: 'abc' } }) }, { escape: escapeForTerminal, color: false });
    expect(plainString(line!)).toBe('step 2 · waiting for approval: ops_exec (rule mode ask)\n    path: "a\\u202e.txt"\n    content: "abc"…  (5000 bytes; in full: harness show s-1 t1-s2-c0)');
  });
});
