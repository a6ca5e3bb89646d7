/**
 * Tool definitions: name, description, zod parameters, risk, source, timeout.
 * Pure data (no execution code) so the workflow can validate arguments deterministically
 * and the worker can execute them; implementations live in `activities/tools/`.
 */
import { z } from 'zod';
import type { Risk, ToolSource, ToolSpec } from './types';
import { mcpServerOf, type McpToolAnnotations } from './mcp';

/** Raised when a tool definition is malformed; thrown at build time, before anything runs. */
export class ToolDefinitionError extends Error {
  override name = 'ToolDefinitionError';
}

/**
 * A validated tool definition. `runsIn`: `workflow` tools never leave deterministic code;
 * `local_activity` tools are fast and host-local (workspace files, the clock) and run as
 * local activities — a marker in history, no extra round trip through the server;
 * `activity` tools (network, sandbox, anything slow) run as regular activities.
 */
export interface ToolDefinition<P extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  parameters: P;
  risk: Risk;
  source: ToolSource;
  timeoutMs: number;
  runsIn: 'workflow' | 'local_activity' | 'activity';
  /**
   * String arguments that are payloads (a file's content, a request body): when large they are
   * stored once and the workflow sees a reference. Never an argument the policy decides on.
   */
  blobArgs?: readonly string[];
  /** MCP tools: the name the server knows the tool by (`name` is the qualified `mcp__<server>__<tool>`). */
  mcpTool?: string;
  /** MCP tools: the server's hints about the tool (never a permission). */
  annotations?: McpToolAnnotations;
  /** Custom tools: whether a call may run twice (retried after a lost worker); otherwise a claim makes it run at most once. */
  idempotent?: boolean;
  /**
   * Safe to run together: a call of this tool may run at the same time as the other such calls
   * of its step (deterministic/call-groups.ts). The built-in reads, MCP tools the server marks
   * read-only, custom tools declared `parallel`. Never a tool the workflow runs itself.
   */
  parallel?: boolean;
  /** MCP tools: nodes of the expanded schema; arguments costing more than MAX_CHECK_WORK to validate are checked only as an object. */
  checkCost?: number;
}

const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
const RISKS: readonly Risk[] = ['read_only', 'write', 'network', 'dangerous'];

/** What a definition gives: everything but what defineTool fills in by default. */
type ToolDefinitionInput<P extends z.ZodObject> = Omit<ToolDefinition<P>, 'source' | 'timeoutMs' | 'runsIn' | 'blobArgs'> &
  Partial<Pick<ToolDefinition<P>, 'source' | 'timeoutMs' | 'runsIn' | 'blobArgs'>>;

/** Checks a definition and returns it; throws ToolDefinitionError naming the tool and the problem. */
export function defineTool<P extends z.ZodObject>(def: ToolDefinitionInput<P>): ToolDefinition<P> {
  const tool = checkedMeta(def);
  checkParameters(def.name, def.parameters, def.blobArgs);
  return { ...tool, parameters: def.parameters };
}

/**
 * defineTool for a definition whose zod parameters are built when first read, then kept (and
 * checked then). The workflow bundle's modules are evaluated again for every workflow a thread
 * creates: building every built-in's schemas was about 7 ms of each, and a workflow now builds
 * only those of the tools its calls name. Anything that reads `parameters` (validation, the
 * JSON schema sent to the model, a spread) builds them.
 */
export function defineLazyTool<P extends z.ZodObject>(def: Omit<ToolDefinitionInput<P>, 'parameters'> & { parameters: () => P }): ToolDefinition<P> {
  const { parameters: build, ...rest } = def;
  const tool = checkedMeta(rest);
  let built: P | undefined;
  const parameters = () => (built ??= checkParameters(def.name, build(), def.blobArgs));
  return Object.defineProperty(tool, 'parameters', { enumerable: true, get: parameters }) as ToolDefinition<P>;
}

/** The checks of everything but the parameters, with the defaults filled in. */
function checkedMeta<D extends Omit<ToolDefinitionInput<z.ZodObject>, 'parameters'>>(def: D): Omit<D, 'timeoutMs'> & Pick<ToolDefinition, 'source' | 'runsIn' | 'timeoutMs'> {
  const where = `tool ${JSON.stringify(def.name)}`;
  if (typeof def.name !== 'string' || !NAME.test(def.name)) {
    throw new ToolDefinitionError(`${where}: name must match ${NAME}`);
  }
  if (typeof def.description !== 'string' || def.description.trim().length < 10) {
    throw new ToolDefinitionError(`${where}: description must say what the tool does (10+ characters)`);
  }
  if (!RISKS.includes(def.risk)) {
    throw new ToolDefinitionError(`${where}: risk must be one of ${RISKS.join(', ')}`);
  }
  const timeoutMs = def.timeoutMs ?? 30_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ToolDefinitionError(`${where}: timeoutMs must be a positive number`);
  }
  return { source: 'local', runsIn: 'activity', ...def, timeoutMs };
}

/** The parameters must be a zod object, and each blob argument a string parameter. */
function checkParameters<P extends z.ZodObject>(name: string, parameters: P, blobArgs: readonly string[] | undefined): P {
  const where = `tool ${JSON.stringify(name)}`;
  if (!(parameters instanceof z.ZodObject)) {
    throw new ToolDefinitionError(`${where}: parameters must be a zod object schema`);
  }
  for (const arg of blobArgs ?? []) {
    const field = parameters.shape[arg];
    const inner = field instanceof z.ZodOptional ? field.unwrap() : field;
    if (!(inner instanceof z.ZodString)) throw new ToolDefinitionError(`${where}: blob argument ${arg} must be a string parameter`);
  }
  return parameters;
}

/** The JSON-schema view of a definition, as sent to the model. */
function toToolSpec(def: ToolDefinition): ToolSpec {
  const parameters = z.toJSONSchema(def.parameters, { io: 'input' }) as Record<string, unknown>;
  delete parameters.$schema;
  return {
    name: def.name,
    description: def.description,
    parameters,
    risk: def.risk,
    source: def.source,
    timeoutMs: def.timeoutMs,
  };
}

/** Formats zod issues as one line naming each offending field. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.length ? issue.path.join('.') : '(arguments)';
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}

/** A name-indexed set of definitions; duplicate names are a build-time error. */
export class ToolRegistry {
  private readonly byName = new Map<string, ToolDefinition>();

  /** `unavailable`: MCP servers whose tools could not be listed, with why (their calls get MCP_SERVER_UNAVAILABLE). */
  constructor(
    defs: ToolDefinition[],
    private readonly unavailable: ReadonlyMap<string, string> = new Map(),
  ) {
    for (const def of defs) {
      if (this.byName.has(def.name)) throw new ToolDefinitionError(`tool "${def.name}" is defined twice`);
      this.byName.set(def.name, def);
    }
  }

  get(name: string): ToolDefinition | undefined {
    return this.byName.get(name);
  }

  /** Why a tool of a server that failed discovery cannot be called (undefined for any other name). */
  unavailableReason(name: string): { server: string; why: string } | undefined {
    const server = mcpServerOf(name);
    const why = server === undefined ? undefined : this.unavailable.get(server);
    return why === undefined ? undefined : { server: server!, why };
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The same tools (and unavailable servers) with `def` in place of the tool of its name. */
  replacing(def: ToolDefinition): ToolRegistry {
    return new ToolRegistry([...this.byName.values()].map((d) => (d.name === def.name ? def : d)), this.unavailable);
  }

  specs(): ToolSpec[] {
    return [...this.byName.values()].map(toToolSpec);
  }
}
