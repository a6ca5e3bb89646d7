/**
 * A leaner `@temporalio/proto` for the CLI's client processes. The package builds a protobufjs
 * root of the whole Temporal API (some 1,200 messages, worker-only ones included) when first
 * required: most of what `harness status` cost to start. This root starts with what the usual
 * client calls need (client/lean-proto/split.ts, split at build time) and adds the rest, into
 * the same root, the first time anything outside that is reached:
 *   - a property of a namespace the package exports (`proto.coresdk`, `…v1.SomeMessage`);
 *   - a call of a service method whose messages are not all there yet;
 *   - a lookup by name that finds nothing.
 * So every message stays reachable as before; only when it is built changes.
 */
import Module, { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type * as Protobuf from 'protobufjs';
import { lazyCodecs } from './codecs';
import { kindOf, type LeanProto, type NestedJson, type RestIndex } from './split';

/** Where the build writes the halves (scripts/lean-proto.ts): beside the compiled install.js. */
export const LEAN_PROTO_FILES = { eager: 'eager.js', rest: 'rest.js' };

type Namespace = Protobuf.Namespace & Record<string, unknown>;
type Patch = (root: Protobuf.Root) => Namespace;

/**
 * Makes later `require('@temporalio/proto')`s of the Temporal SDK answer with the lean root,
 * built on first use. Does nothing (false) when the halves were not built or the package is
 * already loaded.
 */
export function installLeanProto(dir: string = __dirname): boolean {
  const eagerFile = path.join(dir, LEAN_PROTO_FILES.eager);
  if (!existsSync(eagerFile)) return false;
  const targets = new Set(['@temporalio/client', '@temporalio/common'].map((pkg) => createRequire(require.resolve(pkg)).resolve('@temporalio/proto')));
  if ([...targets].some((file) => require.cache[file])) return false;
  const protoIndex = [...targets][0]!;
  const protoRequire = createRequire(protoIndex);
  let built: Namespace | undefined;
  const build = () =>
    (built ??= leanRoot(
      require(eagerFile) as Omit<LeanProto, 'rest'>,
      () => (require(path.join(dir, LEAN_PROTO_FILES.rest)) as Pick<LeanProto, 'rest'>).rest,
      protoRequire('protobufjs/light') as typeof Protobuf,
      (protoRequire('./../lib/patch-protobuf-root') as { patchProtobufRoot: Patch }).patchProtobufRoot,
    ));
  for (const file of targets) {
    const m = new Module(file);
    m.filename = file;
    m.loaded = true;
    m.paths = (Module as unknown as { _nodeModulePaths(dir: string): string[] })._nodeModulePaths(path.dirname(file));
    // Built when first required: a command that never talks to Temporal pays nothing.
    Object.defineProperty(m, 'exports', { get: build, set: (v: Namespace) => (built = v), enumerable: true, configurable: true });
    require.cache[file] = m;
  }
  return true;
}

/**
 * The patched root (the shape @temporalio/proto exports: namespaces as properties) of `eager`,
 * which adds `rest()` when something outside eager is reached.
 */
export function leanRoot(data: Omit<LeanProto, 'rest'>, rest: () => NestedJson, pb: typeof Protobuf, patch: Patch): Namespace {
  // As @temporalio/proto builds its root: addJSON, which resolves nothing until it is used.
  lazyCodecs(pb);
  const root = new pb.Root();
  root.addJSON(data.eager.nested ?? {});
  const eagerMethods = new Set(data.eagerMethods);
  /** Each namespace of the root and its copy in the patched root, by full name. */
  const copies = new Map<string, { real: Namespace; copy: Namespace }>();
  let restAdded = false;
  const addRest = () => {
    if (restAdded) return;
    restAdded = true;
    merge(root as unknown as Namespace, rest());
  };
  const merge = (real: Namespace, json: NestedJson) => {
    const pair = copies.get(real.fullName);
    for (const [name, obj] of Object.entries(json.nested ?? {})) {
      const existing = real.get(name);
      if (existing && kindOf(obj) === 'namespace' && isPlainNamespace(existing)) merge(existing as Namespace, obj);
      else {
        real.addJSON({ [name]: obj });
        if (pair) expose(pair.copy, real, name);
      }
    }
    if (pair) {
      // The copy shares `nested` with the namespace but took its caches as they were.
      pair.copy._lookupCache = Object.create(null);
      pair.copy._nestedArray = null;
    }
  };
  // What the patch would have made of `name` in `real`'s copy.
  const expose = (copy: Namespace, real: Namespace, name: string) => {
    const value = isPlainNamespace(real.get(name)) ? copyNamespace(real.get(name) as Namespace) : (real[name] ?? real.get(name));
    Object.defineProperty(copy, name, { value, writable: true, enumerable: true, configurable: true });
  };

  const lookup = pb.Namespace.prototype.lookup;
  const eachNamespace = (ns: Namespace, fn: (ns: Namespace) => void) => {
    fn(ns);
    for (const n of ns.nestedArray) if (isPlainNamespace(n)) eachNamespace(n as Namespace, fn);
  };
  eachNamespace(root as unknown as Namespace, (ns) => {
    // A name not found may be in the rest (set before patching: the patch copies it).
    ns.lookup = function (this: Protobuf.Namespace, ...args: Parameters<typeof lookup>) {
      const found = lookup.apply(this, args);
      if (found || restAdded) return found;
      addRest();
      return lookup.apply(this, args);
    } as typeof lookup;
    for (const n of ns.nestedArray) if (n instanceof pb.Service) lazyCreate(n, pb, eagerMethods, addRest);
  });

  const patched = patch(root);
  const copyOf = (fullName: string): Namespace | undefined => {
    if (fullName === '') return patched;
    let c: Namespace | undefined = patched;
    for (const part of fullName.slice(1).split('.')) c = c?.[part] as Namespace | undefined;
    return c;
  };
  eachNamespace(root as unknown as Namespace, (ns) => {
    const copy = copyOf(ns.fullName);
    if (copy) copies.set(ns.fullName, { real: ns, copy });
  });
  // Reaching a name only the rest has adds the rest.
  const placeholders = (index: RestIndex, fullName: string) => {
    const pair = copies.get(fullName);
    for (const [name, inner] of Object.entries(index)) {
      if (inner !== 1) placeholders(inner, `${fullName}.${name}`);
      else if (pair && !Object.prototype.hasOwnProperty.call(pair.copy, name) && /^[A-Za-z_$]/.test(name)) {
        Object.defineProperty(pair.copy, name, {
          get() {
            addRest();
            return pair.copy[name];
          },
          enumerable: true,
          configurable: true,
        });
      }
    }
  };
  placeholders(data.restIndex, '');
  return patched;
}

/** What @temporalio/proto's patchProtobufRoot makes of a namespace below the root: a copy with its members as properties. */
function copyNamespace(ns: Namespace): Namespace {
  const copy = new (ns.constructor as new (name: string) => Namespace)(ns.name);
  for (const key in ns) if (key !== 'root') copy[key] = ns[key];
  for (const [name, value] of Object.entries(ns.nested ?? {})) {
    if (PROTOBUF_PROPS.has(name)) continue;
    if (isPlainNamespace(value)) copy[name] = copyNamespace(value as Namespace);
    else if ((value.constructor as { className?: string }).className === 'Type') copy[name] = value;
  }
  return copy;
}

/** Names protobufjs uses on its objects, which the patch leaves alone (as @temporalio/proto does). */
const PROTOBUF_PROPS = new Set(['options', 'parsedOptions', 'name', 'parent', 'resolved', 'comment', 'filename', 'nested', '_nestedArray']);

function isPlainNamespace(o: unknown): boolean {
  return typeof o === 'object' && o !== null && (o.constructor as { className?: string }).className === 'Namespace';
}

/**
 * Service.create resolves every method's messages when the client is made; this one resolves a
 * method when it is first called, adding the rest first when its messages are not all eager.
 */
function lazyCreate(service: Protobuf.Service, pb: typeof Protobuf, eagerMethods: Set<string>, addRest: () => void): void {
  service.create = function create(rpcImpl, requestDelimited, responseDelimited) {
    const rpcService = new pb.rpc.Service(rpcImpl, requestDelimited, responseDelimited) as Protobuf.rpc.Service & Record<string, unknown>;
    for (const method of this.methodsArray) {
      let types: [Protobuf.Constructor<object>, Protobuf.Constructor<object>] | undefined;
      rpcService[pb.util.lcFirst(method.name).replace(/[^$\w_]/g, '')] = function rpcMethod(this: Protobuf.rpc.Service, request: unknown, callback?: unknown) {
        if (!types) {
          if (!eagerMethods.has(method.fullName)) addRest();
          method.resolve();
          types = [method.resolvedRequestType!.ctor, method.resolvedResponseType!.ctor];
        }
        return (pb.rpc.Service.prototype as unknown as { rpcCall: (...a: unknown[]) => unknown }).rpcCall.call(this, method, types[0], types[1], request, callback);
      };
    }
    return rpcService;
  };
}
