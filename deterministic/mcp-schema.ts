/**
 * An MCP server's input schema made safe to validate model-written arguments with inside the
 * workflow, where a validation running for seconds fails the workflow task (and a task running
 * past the sandbox's limit took the whole worker down). A server-written `pattern` is run by a
 * backtracking engine (`^(a+)+$` on 30 characters: minutes); `anyOf` branches that share
 * definitions multiply (20 levels: 11 s); a schema applied to every element of a large argument
 * multiplies by its size. So: patterns are left to the server (it validates again), and each
 * schema gets a cost (its nodes with every reference expanded) that bounds the work per argument
 * character; recursive, too deep or too costly schemas are checked only as "an object". Pure.
 */

/** Schemas nested deeper than this (JSON levels) are checked only as an object. */
const MAX_SCHEMA_DEPTH = 100;
/** Expanded schemas larger than this (nodes) are checked only as an object. */
const MAX_SCHEMA_COST = 100_000;
/** Validation work allowed for one call: schema cost × argument characters (about 10 ns each). */
export const MAX_CHECK_WORK = 10_000_000;

// Keywords whose value maps names to schemas: the names are not keywords.
const NAME_MAPS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas']);
// Keywords whose value is data, not schema.
const DATA = new Set(['enum', 'const', 'default', 'examples', 'required']);

class TooComplex extends Error {}

/** The schema without patterns and its cost, or undefined when it is recursive, too deep or too costly. */
export function preparedSchema(schema: Record<string, unknown>): { schema: Record<string, unknown>; cost: number } | undefined {
  try {
    const stripped = strip(schema, 0, false) as Record<string, unknown>;
    const cost = expandedSize(stripped);
    return cost <= MAX_SCHEMA_COST ? { schema: stripped, cost } : undefined;
  } catch {
    return undefined; // TooComplex, or anything odd in server data: the permissive form is safe
  }
}

/** A copy without `pattern` and `patternProperties` keywords (a property may still be named so). */
function strip(node: unknown, depth: number, names: boolean): unknown {
  if (depth > MAX_SCHEMA_DEPTH) throw new TooComplex();
  if (Array.isArray(node)) return node.map((v) => strip(v, depth + 1, false));
  if (!node || typeof node !== 'object') return node;
  const entries: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(node)) {
    if (!names && (k === 'pattern' || k === 'patternProperties')) continue;
    entries.push([k, !names && DATA.has(k) ? v : strip(v, depth + 1, !names && NAME_MAPS.has(k))]);
  }
  return Object.fromEntries(entries); // never assigns: a `__proto__` key stays a plain key
}

/** Nodes of the schema with every local `$ref` expanded (enum values counted); a cycle is too complex. */
function expandedSize(root: Record<string, unknown>): number {
  const done = new Map<unknown, number>();
  const active = new Set<unknown>();
  const size = (node: unknown, depth: number): number => {
    if (depth > 4 * MAX_SCHEMA_DEPTH) throw new TooComplex();
    if (!node || typeof node !== 'object') return 1;
    const known = done.get(node);
    if (known !== undefined) return known;
    if (active.has(node)) throw new TooComplex(); // a reference cycle: recursion as deep as the arguments
    active.add(node);
    let n = 1;
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') n += size(resolve(root, v) ?? unresolved(), depth + 1);
      else if (k === 'enum' && Array.isArray(v)) n += v.length;
      else if (!DATA.has(k)) n += size(v, depth + 1);
      if (n > MAX_SCHEMA_COST) throw new TooComplex();
    }
    active.delete(node);
    done.set(node, n);
    return n;
  };
  return size(root, 0);
}

// A reference this cannot follow has a cost it cannot know.
function unresolved(): never {
  throw new TooComplex();
}

/** The target of a local JSON pointer (`#`, `#/$defs/x`), or undefined. */
function resolve(root: Record<string, unknown>, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const part of ref.slice(1).split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!node || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
