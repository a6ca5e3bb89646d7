/**
 * How a failed call reads to a person waiting (client/wait-progress.ts): which gRPC answers a wait
 * rides out, and in what words. The real faults behind them are in test/cli/wait-faults.test.ts.
 */
import { ServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { callTrouble, isNoPoller, noWorker } from '../../client/wait-progress';

/** A gRPC error as grpc-js makes it, wrapped as the Temporal client throws it. */
function grpc(code: number, details: string): ServiceError {
  return new ServiceError('Failed to query Workflow', { cause: Object.assign(new Error(`${code} X: ${details}`), { code, details, metadata: {} }) });
}
const at = '127.0.0.1:7233';

describe('callTrouble', () => {
  it('reads FAILED_PRECONDITION "no poller seen" as no worker polling, for any call', () => {
    const err = grpc(9, 'no poller seen for task queue recently, worker may be down');
    expect(isNoPoller(err)).toBe(true);
    expect(callTrouble(err, 'query', at)).toEqual({ kind: 'worker', text: expect.stringMatching(/^no worker polls the task queue/) });
    expect(callTrouble(err, 'server', at)?.kind).toBe('worker');
  });

  it('leaves any other FAILED_PRECONDITION to the caller (not something waiting cures)', () => {
    expect(callTrouble(grpc(9, 'workflow execution already completed'), 'query', at)).toBeUndefined();
    expect(isNoPoller(grpc(9, 'workflow execution already completed'))).toBe(false);
  });

  it('names unreachable, overloaded and silent servers; a query that timed out is a worker not answering', () => {
    expect(callTrouble(grpc(14, 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:7233'), 'server', at)?.text).toBe(
      `Temporal at ${at} is unreachable (connection refused)`,
    );
    expect(callTrouble(grpc(8, 'namespace rate limit exceeded'), 'server', at)?.text).toBe(`Temporal at ${at} is overloaded (namespace rate limit exceeded)`);
    expect(callTrouble(grpc(4, 'Deadline exceeded'), 'server', at, 5_000)?.text).toBe(`Temporal at ${at} did not answer within 5 s`);
    expect(callTrouble(grpc(4, 'Deadline exceeded'), 'query', at, 20_000)?.kind).toBe('worker');
    // A query the server cut when the worker that held it was killed.
    expect(callTrouble(grpc(1, 'Call cancelled'), 'query', at, 1_500)?.text).toBe('no worker answered a query within 1.5 s (busy, stuck or just stopped?)');
    expect(callTrouble(grpc(1, 'Call cancelled'), 'server', at)?.kind).toBe('temporal');
  });

  it('a deadline after statuses the SDK retried silently is named by them, query or not', () => {
    const seen = { code: 8, details: 'namespace rate limit exceeded', at: Date.now() };
    expect(callTrouble(grpc(4, 'Deadline exceeded'), 'query', at, 20_000, seen)?.text).toBe(`Temporal at ${at} is overloaded (namespace rate limit exceeded)`);
    expect(callTrouble(grpc(4, 'Deadline exceeded'), 'server', at, 5_000, { ...seen, code: 14, details: 'connect ECONNREFUSED 127.0.0.1:7233' })?.text).toBe(
      `Temporal at ${at} is unreachable (connection refused)`,
    );
  });

  it('is undefined for errors waiting does not cure (not found, invalid, not gRPC)', () => {
    expect(callTrouble(grpc(5, 'workflow not found'), 'query', at)).toBeUndefined();
    expect(callTrouble(grpc(3, 'bad request'), 'server', at)).toBeUndefined();
    expect(callTrouble(new Error('a bug'), 'server', at)).toBeUndefined();
  });
});

describe('noWorker', () => {
  it('names the task queue, and when the last poll began when the server knows', () => {
    expect(noWorker('q', at).text).toBe(`no worker polls task queue q on Temporal at ${at}`);
    expect(noWorker('q', at, { polled: true, agoMs: 41_400 }).text).toBe(`no worker polls task queue q on Temporal at ${at} (its last poll began 41 s ago)`);
    expect(noWorker('q', at, { polled: false }).text).toBe(`no worker polls task queue q on Temporal at ${at}`);
  });
});
