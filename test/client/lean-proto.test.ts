/**
 * The lean @temporalio/proto of the CLI's client processes (client/lean-proto/): its two halves
 * make exactly the package's definitions; it encodes and decodes as the package does; what is
 * outside the eager half is still reached (and the rest added) by property, by lookup and by a
 * service call; and a client process that loads the SDK builds only the eager half.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { leanRoot } from '../../client/lean-proto/install';
import { splitProto, temporalProtoJson, type NestedJson } from '../../client/lean-proto/split';

const protoRequire = createRequire(require.resolve('@temporalio/proto'));
const pb = protoRequire('protobufjs/light') as typeof Protobuf;
const { patchProtobufRoot } = protoRequire('./../lib/patch-protobuf-root') as { patchProtobufRoot: (r: Protobuf.Root) => Record<string, never> };
const full = temporalProtoJson();
const { rest, ...eager } = splitProto(full, pb);

/** A tree with its keys sorted, so two JSONs of one root compare whatever order they were added in. */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
  return v;
}

/** What the patched root holds at a dotted path. */
function at<T>(root: unknown, dotted: string): T {
  return dotted.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], root) as T;
}

function fresh() {
  let restRead = 0;
  const root = leanRoot(eager, () => (restRead++, rest), pb, patchProtobufRoot) as unknown as Protobuf.Root;
  return { root, restRead: () => restRead };
}

describe('lean @temporalio/proto', () => {
  it('splits the definitions into two halves that together make them all', () => {
    const { root, restRead } = fresh();
    expect(Object.keys(eager.eager.nested ?? {}).length).toBeGreaterThan(0);
    expect(at(root, 'temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse')).toBeDefined();
    expect(restRead()).toBe(0);
    expect(at(root, 'coresdk.workflow_activation.WorkflowActivation')).toBeInstanceOf(pb.Type);
    expect(restRead()).toBe(1);
    const whole = new pb.Root();
    whole.addJSON(full.nested ?? {});
    expect(sorted(root.toJSON())).toEqual(sorted(whole.toJSON()));
  });

  it('encodes and decodes a response as the whole package does', () => {
    const whole = patchProtobufRoot(pb.Root.fromJSON(full as NestedJson & Record<string, never>) as Protobuf.Root);
    const { root, restRead } = fresh();
    const message = {
      executionConfig: { taskQueue: { name: 'q' } },
      workflowExecutionInfo: { execution: { workflowId: 's-1', runId: 'r' }, type: { name: 'session' }, status: 1, historyLength: 12 },
      pendingActivities: [{ activityId: 'a', attempt: 2 }],
    };
    const type = (r: unknown) => at<Protobuf.Type>(r, 'temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse');
    const bytes = type(root).encode(message).finish();
    expect(Buffer.from(bytes)).toEqual(Buffer.from(type(whole).encode(message).finish()));
    expect(type(whole).toObject(type(root).decode(bytes))).toEqual(type(whole).toObject(type(whole).decode(bytes)));
    expect(restRead()).toBe(0);
  });

  it('adds the rest for a lookup or a service call outside the eager half', () => {
    const first = fresh();
    expect(first.root.lookupType('temporal.api.cloud.cloudservice.v1.GetUsersRequest').fullName).toBe('.temporal.api.cloud.cloudservice.v1.GetUsersRequest');
    expect(first.restRead()).toBe(1);

    const second = fresh();
    const calls: { method: string; bytes: Uint8Array }[] = [];
    const service = at<Protobuf.Service>(second.root, 'temporal.api.workflowservice.v1.WorkflowService').create(
      (method: Protobuf.Method, bytes: Uint8Array, done: (err: Error | null, res: Uint8Array) => void) => {
        calls.push({ method: method.name, bytes });
        done(null, new Uint8Array());
      },
      false,
      false,
    );
    const listSchedules = (service as unknown as Record<string, (req: object) => Promise<unknown>>).listSchedules!;
    expect(typeof listSchedules).toBe('function');
    expect(second.restRead()).toBe(0);
    return listSchedules.call(service, { namespace: 'default', maximumPageSize: 3 }).then(() => {
      expect(second.restRead()).toBe(1);
      expect(calls[0]!.method).toBe('ListSchedules');
      const decoded = at<Protobuf.Type>(second.root, 'temporal.api.workflowservice.v1.ListSchedulesRequest').decode(calls[0]!.bytes);
      expect((decoded as unknown as { namespace: string }).namespace).toBe('default');
    });
  });

  it("serves the Temporal SDK in a process that installs it, without building the rest (the build's halves in dist/)", () => {
    const dist = path.resolve(__dirname, '../../dist/client/lean-proto/install.js');
    const out = execFileSync(
      process.execPath,
      [
        '-e',
        `const ok = require(${JSON.stringify(dist)}).installLeanProto();
         const { Connection } = require('@temporalio/client');
         const proto = require('@temporalio/proto');
         const rest = Object.keys(require.cache).some((f) => f.endsWith('lean-proto/rest.js'));
         process.stdout.write(JSON.stringify({ ok, connection: typeof Connection, service: typeof proto.temporal.api.workflowservice.v1.WorkflowService.create, rest }));`,
      ],
      { cwd: path.resolve(__dirname, '../..'), encoding: 'utf8' },
    );
    expect(JSON.parse(out)).toEqual({ ok: true, connection: 'function', service: 'function', rest: false });
  });
});
