/**
 * `defineTool`: a tool written in TypeScript, run by a worker (createHarnessWorker({ tools }))
 * with what the built-ins get: its arguments validated (in the workflow against the JSON schema
 * derived from `schema`, then on the worker against `schema` itself), judged by the permission
 * policy by its `risk` (the default `ask` mode asks before anything but `read_only`), a timeout,
 * heartbeats, a structured result, a span in the trace, and, unless it is `idempotent`, at most
 * one run per call however often its worker is lost. A `parallel` tool's calls run together with
 * the step's other calls that may (deterministic/call-groups.ts).
 */
import { z } from 'zod';
import { BUILTIN_TOOLS } from '../deterministic/builtin-tools';
import type { HarnessTool, ToolContext } from '../deterministic/custom-tools';
import { TOOL_NAME } from '../deterministic/mcp';
import { ToolDefinitionError } from '../deterministic/tools';
import type { Risk } from '../deterministic/types';

/** What defineTool takes. */
export interface ToolDefinitionInput<S extends z.ZodObject> {
  /** What the model calls it: letters, digits, `_` and `-`, starting with a letter (at most 64). */
  name: string;
  /** What it does, when to use it, what it returns: the model reads this (10 to 2,000 characters). */
  description: string;
  /** A zod object schema of the arguments. */
  schema: S;
  /** Drives the policy: `read_only` runs under the default policy, `write`, `network` and `dangerous` ask first. */
  risk: Risk;
  /** How long one call may run (default 30 s); past it the call's signal is aborted and the model reads TOOL_TIMEOUT. */
  timeoutSec?: number;
  /** True when running a call twice does no harm; otherwise (the default) a call runs at most once. */
  idempotent?: boolean;
  /**
   * True when a call may run at the same time as the other calls of its step that may (the
   * built-in reads, read-only MCP tools, other `parallel` tools): nothing it does changes what
   * they read or do. Otherwise (the default) it runs alone, after the calls before it.
   */
  parallel?: boolean;
  /** The tool's code: its value (any JSON) is the result; throw ToolError for a failure the model should read. */
  run(args: z.output<S>, ctx: ToolContext): unknown;
}

const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const RISKS: readonly Risk[] = ['read_only', 'write', 'network', 'dangerous'];
/** Schemas are recorded in every session's history and sent with every model call: kept small. */
const MAX_SCHEMA_CHARS = 16 * 1024;
const MAX_DESCRIPTION_CHARS = 2_000;
/** A call may run at most a day (the activity's own timeout is derived from it). */
const MAX_TIMEOUT_SEC = 24 * 3600;

/** Checks a tool definition and returns the tool; a mistake throws ToolDefinitionError naming the tool and the field. */
export function defineTool<S extends z.ZodObject>(def: ToolDefinitionInput<S>): HarnessTool<S> {
  const where = `tool ${JSON.stringify(def?.name)}`;
  const fail = (what: string): never => {
    throw new ToolDefinitionError(`${where}: ${what}`);
  };
  if (typeof def?.name !== 'string' || !NAME.test(def.name) || !TOOL_NAME.test(def.name)) fail(`name must match ${NAME}`);
  if (def.name.startsWith('mcp__')) fail('names starting with mcp__ belong to MCP servers');
  if (BUILTIN_TOOLS.some((t) => t.name === def.name)) fail('that is the name of a built-in tool');
  if (typeof def.description !== 'string' || def.description.trim().length < 10) fail('description must say what the tool does (10+ characters)');
  if (def.description.length > MAX_DESCRIPTION_CHARS) fail(`description must be at most ${MAX_DESCRIPTION_CHARS} characters`);
  if (isZod3(def.schema)) fail('schema is a zod 3 schema, and the harness needs zod 4: install zod@4 (npm install zod@4) and build the schema with its z.object');
  if (!(def.schema instanceof z.ZodObject)) fail('schema must be a zod object schema (z.object({ ... }))');
  if (!RISKS.includes(def.risk)) fail(`risk must be one of ${RISKS.join(', ')}`);
  const timeoutSec = def.timeoutSec ?? 30;
  if (typeof timeoutSec !== 'number' || !Number.isFinite(timeoutSec) || timeoutSec <= 0 || timeoutSec > MAX_TIMEOUT_SEC) fail(`timeoutSec must be a number of seconds from 0 to ${MAX_TIMEOUT_SEC}`);
  if (def.idempotent !== undefined && typeof def.idempotent !== 'boolean') fail('idempotent must be true or false');
  if (def.parallel !== undefined && typeof def.parallel !== 'boolean') fail('parallel must be true or false');
  if (typeof def.run !== 'function') fail('run must be a function (args, ctx) => result');
  const parameters = jsonSchema(def.schema, fail);
  const idempotent = def.idempotent ?? false;
  const parallel = def.parallel ?? false;
  // Only a tool that runs together says so: the lists sessions recorded before stay the same.
  const spec = { name: def.name, description: def.description, parameters, risk: def.risk, timeoutMs: Math.round(timeoutSec * 1000), idempotent, ...(parallel ? { parallel } : {}) };
  return Object.freeze({ name: def.name, description: def.description, schema: def.schema, risk: def.risk, timeoutSec, idempotent, parallel, run: def.run, spec });
}

/** Zod 3 schemas carry `_def` but not zod 4's `_zod`: told apart so the error names the version, not the shape. */
function isZod3(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && '_def' in schema && !('_zod' in schema);
}

/** The JSON schema the model and the workflow see: the schema's input side (before transforms). */
function jsonSchema(schema: z.ZodObject, fail: (what: string) => never): Record<string, unknown> {
  let out: Record<string, unknown>;
  try {
    out = z.toJSONSchema(schema, { io: 'input' }) as Record<string, unknown>;
  } catch (err) {
    return fail(`schema cannot be expressed as JSON schema (${(err as Error).message}); use JSON types (strings, numbers, booleans, arrays, objects)`);
  }
  delete out.$schema;
  if (JSON.stringify(out).length > MAX_SCHEMA_CHARS) fail(`schema is larger than ${MAX_SCHEMA_CHARS / 1024} KiB as JSON schema`);
  return out;
}
