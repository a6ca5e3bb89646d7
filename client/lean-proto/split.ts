/**
 * Splits the Temporal API's protobuf definitions (@temporalio/proto) in two for the CLI's client
 * processes (client/lean-proto/install.ts): `eager`, what the usual calls of `status`, `sessions`,
 * `approve` and their siblings read and write, built at once; and `rest`, everything else,
 * added to the same root on first need. Building the whole root cost most of a command's start.
 * The split happens at build time (scripts/lean-proto.ts); the halves are JSON trees in the
 * format protobufjs's Root.fromJSON and Namespace.addJSON take.
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import type * as Protobuf from 'protobufjs';

/** A namespace's JSON: nested objects by name, each a type, enum, service, extension or namespace. */
export interface NestedJson {
  options?: Record<string, unknown>;
  nested?: Record<string, JsonObject>;
}
export type JsonObject = NestedJson & { fields?: unknown; values?: unknown; methods?: Record<string, unknown>; id?: unknown };

/** What the build writes for the client processes. */
export interface LeanProto {
  eager: NestedJson;
  rest: NestedJson;
  /** Methods (full names, e.g. `.temporal.api.workflowservice.v1.WorkflowService.QueryWorkflow`) whose messages are all in `eager`. */
  eagerMethods: string[];
  /** The rest's names in eager's namespaces: 1 for an object only the rest has, else the namespace's own index. */
  restIndex: RestIndex;
}

export interface RestIndex {
  [name: string]: 1 | RestIndex;
}

/**
 * The WorkflowService calls the CLI's client commands make (status, sessions, approve, deny,
 * answer, send, wake, pending, show, end, cancel): their messages are in `eager`. Another call
 * still works; it first adds `rest` (a few tens of ms).
 */
export const EAGER_CALLS = [
  'GetSystemInfo',
  'DescribeWorkflowExecution',
  'DescribeTaskQueue',
  'GetWorkflowExecutionHistory',
  'QueryWorkflow',
  'SignalWorkflowExecution',
  'SignalWithStartWorkflowExecution',
  'StartWorkflowExecution',
  'ExecuteMultiOperation',
  'UpdateWorkflowExecution',
  'PollWorkflowExecutionUpdate',
  'ListWorkflowExecutions',
  'CountWorkflowExecutions',
  'TerminateWorkflowExecution',
  'RequestCancelWorkflowExecution',
];

/** Packages whose every type and enum is eager: the SDK reads their enums when it loads, and errors decode to them. */
const EAGER_PACKAGES = ['.temporal.api.enums.', '.temporal.api.errordetails.', '.temporal.api.failure.', '.temporal.api.sdk.'];

/** Services the SDK's Connection creates (their methods resolve on first call, see install.ts). */
const EAGER_SERVICES = ['.temporal.api.workflowservice.v1.WorkflowService', '.temporal.api.operatorservice.v1.OperatorService', '.temporal.api.testservice.v1.TestService', '.grpc.health.v1.Health'];

type Kind = 'type' | 'enum' | 'service' | 'extension' | 'namespace';

/** How protobufjs's addJSON tells the nested objects apart. */
export function kindOf(json: JsonObject): Kind {
  return json.fields !== undefined ? 'type' : json.values !== undefined ? 'enum' : json.methods !== undefined ? 'service' : json.id !== undefined ? 'extension' : 'namespace';
}

/** The definitions exactly as @temporalio/proto hands them to protobufjs (its generated json-module). */
export function temporalProtoJson(): NestedJson {
  const req = createRequire(require.resolve('@temporalio/proto'));
  const file = req.resolve('./json-module');
  let captured: NestedJson['nested'] | undefined;
  class CapturingRoot {
    addJSON(json: NestedJson['nested']) {
      captured = json;
      return this;
    }
  }
  const fakeProtobuf = { roots: {} as Record<string, unknown>, Root: CapturingRoot };
  const module = { exports: {} };
  const wrapper = vm.runInThisContext(`(function (exports, require, module) {${readFileSync(file, 'utf8')}\n})`, { filename: file }) as (e: unknown, r: (id: string) => unknown, m: unknown) => void;
  wrapper(module.exports, (id) => (id === 'protobufjs/light' ? fakeProtobuf : req(id)), module);
  if (!captured) throw new Error(`${file} did not hand its definitions to Root.addJSON`);
  return { nested: captured };
}

/** The split of `json` (the whole API) into what EAGER_CALLS need and the rest. */
export function splitProto(json: NestedJson, pb: typeof Protobuf): LeanProto {
  const root = pb.Root.fromJSON(json);
  const eagerTypes = new Set<string>();
  // A nested type travels with the top-level type (in its package) that holds it.
  const outermost = (obj: Protobuf.ReflectionObject): Protobuf.ReflectionObject => {
    let o = obj;
    while (o.parent && (o.parent instanceof pb.Type || o.parent instanceof pb.Enum)) o = o.parent;
    return o;
  };
  const visit = (obj: Protobuf.ReflectionObject | null): void => {
    if (!obj) return;
    const top = outermost(obj);
    if (eagerTypes.has(top.fullName)) return;
    eagerTypes.add(top.fullName);
    each(top, (t) => {
      if (t instanceof pb.Type) for (const f of t.fieldsArray) visit(f.resolve().resolvedType);
    });
  };
  const each = (obj: Protobuf.ReflectionObject, fn: (o: Protobuf.ReflectionObject) => void): void => {
    fn(obj);
    if (obj instanceof pb.Namespace) for (const n of obj.nestedArray) each(n, fn);
  };
  const workflowService = root.lookupService('temporal.api.workflowservice.v1.WorkflowService');
  for (const name of EAGER_CALLS) {
    const m = workflowService.methods[name];
    if (!m) throw new Error(`WorkflowService has no method ${name}`);
    m.resolve();
    visit(m.resolvedRequestType);
    visit(m.resolvedResponseType);
  }
  const health = root.lookupService('grpc.health.v1.Health');
  for (const m of health.methodsArray) {
    m.resolve();
    visit(m.resolvedRequestType);
    visit(m.resolvedResponseType);
  }
  each(root, (o) => {
    if ((o instanceof pb.Type || o instanceof pb.Enum) && EAGER_PACKAGES.some((p) => o.fullName.startsWith(p))) visit(o);
  });

  const eagerMethods: string[] = [];
  for (const name of EAGER_SERVICES) {
    const service = root.lookupService(name);
    for (const m of service.methodsArray) {
      m.resolve();
      if (eagerTypes.has(outermost(m.resolvedRequestType!).fullName) && eagerTypes.has(outermost(m.resolvedResponseType!).fullName)) eagerMethods.push(m.fullName);
    }
  }
  const isEager = (fullName: string, obj: JsonObject): boolean => {
    const kind = kindOf(obj);
    return kind === 'type' || kind === 'enum' ? eagerTypes.has(fullName) : kind === 'service' ? EAGER_SERVICES.includes(fullName) : false;
  };
  const eager = pick(json, '', isEager, true);
  const rest = pick(json, '', (n, o) => !isEager(n, o), false);
  return { eager, rest, eagerMethods, restIndex: indexOf(rest, eager) };
}

function indexOf(rest: NestedJson, eager: NestedJson | undefined): RestIndex {
  const index: RestIndex = {};
  for (const [name, obj] of Object.entries(rest.nested ?? {})) {
    const both = eager?.nested?.[name];
    index[name] = both && kindOf(both) === 'namespace' && kindOf(obj) === 'namespace' ? indexOf(obj, both) : 1;
  }
  return index;
}

/**
 * The namespaces of `json` holding what `keep` keeps. `eager`: the options of each namespace go
 * with it; the rest's namespaces that eager also has carry none (adding them keeps eager's).
 */
function pick(json: NestedJson, prefix: string, keep: (fullName: string, obj: JsonObject) => boolean, eager: boolean): NestedJson {
  const out: NestedJson = {};
  const nested: Record<string, JsonObject> = {};
  for (const [name, obj] of Object.entries(json.nested ?? {})) {
    const fullName = `${prefix}.${name}`;
    // A namespace with nothing in it (the JSON has some, e.g. `_operation`) goes as it is, with the rest.
    if (kindOf(obj) !== 'namespace' || !obj.nested) {
      if (keep(fullName, obj)) nested[name] = obj;
      continue;
    }
    const inner = pick(obj, fullName, keep, eager);
    if (!inner.nested) continue;
    const hasEager = eager || hasAny(obj, fullName, (n, o) => !keep(n, o));
    nested[name] = eager || !hasEager ? { ...(obj.options ? { options: obj.options } : {}), ...inner } : inner;
  }
  if (Object.keys(nested).length) out.nested = nested;
  return out;
}

function hasAny(json: NestedJson, prefix: string, test: (fullName: string, obj: JsonObject) => boolean): boolean {
  return Object.entries(json.nested ?? {}).some(([name, obj]) => {
    const fullName = `${prefix}.${name}`;
    return kindOf(obj) === 'namespace' && obj.nested ? hasAny(obj, fullName, test) : test(fullName, obj);
  });
}
