/** `--json` speaks snake_case: our keys are converted, data (arguments, memory, schemas, span input and output) is not. */
import { describe, expect, it } from 'vitest';
import { snakeCase, snakeKeys } from '../../cli/json-casing';

describe('snake_case JSON', () => {
  it('converts the keys of our own objects, deeply, and leaves snake_case keys alone', () => {
    expect(snakeCase('turnCount')).toBe('turn_count');
    expect(snakeCase('terminated_by')).toBe('terminated_by');
    expect(snakeKeys({ sessionId: 's', lastTurn: { turnId: 't', terminated_by: 'final_answer' }, pending: { kind: 'approvals', calls: [{ callId: 'c', digest: 'd' }] } })).toEqual({
      session_id: 's',
      last_turn: { turn_id: 't', terminated_by: 'final_answer' },
      pending: { kind: 'approvals', calls: [{ call_id: 'c', digest: 'd' }] },
    });
  });

  it('keeps data as it was written: call arguments, memory, schemas, inputs and outputs', () => {
    const data = { args: { filePath: 'a', nested: { keepMe: 1 } }, memory: { myNote: 'x' }, requestedSchema: { properties: { userName: {} } }, input: { callIndex: 1 }, output: { toolCalls: [] }, result: { exitCode: 0 } };
    const { requestedSchema, ...rest } = data;
    expect(snakeKeys({ calls: [data] })).toEqual({ calls: [{ ...rest, requested_schema: requestedSchema }] });
    expect(snakeKeys([1, 'a', null, { aB: [{ cD: true }] }])).toEqual([1, 'a', null, { a_b: [{ c_d: true }] }]);
  });
});
