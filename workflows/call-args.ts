/**
 * Reading and checking a tool call's arguments: model-written text, read in workflow code, where
 * a throw, a stack overflow or a long computation fails the workflow task (Temporal retries it
 * forever, on every worker). So every outcome here is a value: the arguments, or a structured
 * tool error the model reads. Pure and deterministic.
 */
import { z } from 'zod';
import { toolError } from '../deterministic/errors';
import { clipText, MAX_ARGS_DEPTH, MAX_STEP_VALUES, scanJson } from '../deterministic/json-bounds';
import { MAX_CHECK_WORK } from '../deterministic/mcp-schema';
import { describeIssues, type ToolDefinition } from '../deterministic/tools';
import type { ToolCall, ToolResult } from '../deterministic/types';

/** Validation messages longer than this are cut (a server's enum of thousands of values would be echoed whole). */
export const MAX_ISSUES_CHARS = 1000;
/** A tool name is echoed back at most this long (no tool's name is longer than 64). */
export const MAX_NAME_ECHO = 100;

/** What is left of a step's MAX_STEP_VALUES for its calls still to judge (they take from it in order). */
export interface StepBudget {
  values: number;
}

/** What reading or checking gave: the value, or the error the model gets instead. */
export type Checked<T> = { ok: true; value: T } | { ok: false; result: ToolResult };

const fail = (message: string, suggestion: string): Checked<never> => ({ ok: false, result: toolError('INVALID_ARGUMENTS', message, { suggestion }) });

/**
 * The call's arguments parsed. `bounded` (every turn but those recorded before it) refuses text
 * nesting deeper than MAX_ARGS_DEPTH before parsing, so nothing after ever recurses that deep,
 * and text holding more values than the step's `budget` has left, so no pass over them is slow.
 */
export function readArguments(call: ToolCall, bounded: boolean, budget?: StepBudget): Checked<unknown> {
  const text: unknown = call.arguments;
  // Only a provider that breaks the protocol sends anything but text (the model activity turns it into text).
  if (typeof text !== 'string') return fail(`Arguments of ${call.name} are not JSON text.`, 'Send the arguments as one JSON object matching the tool schema.');
  const shape = bounded ? scanJson(text, MAX_ARGS_DEPTH) : undefined;
  if (shape?.tooDeep) {
    return fail(`Arguments of ${call.name} nest arrays and objects deeper than ${MAX_ARGS_DEPTH} levels.`, 'Send flatter arguments matching the tool schema.');
  }
  if (shape && budget) {
    if (shape.values > budget.values) {
      return fail(
        `Arguments of ${call.name} hold about ${shape.values} values; the calls of one reply may hold ${MAX_STEP_VALUES} together (${budget.values} were left).`,
        'Send less data per reply: split it over several steps, or write large content to a file with write_file.',
      );
    }
    budget.values -= shape.values;
  }
  try {
    return { ok: true, value: text.trim() === '' ? {} : JSON.parse(text) };
  } catch (err) {
    return fail(`Arguments of ${call.name} are not valid JSON: ${(err as Error).message}`, 'Send the arguments as one JSON object matching the tool schema.');
  }
}

const AN_OBJECT = z.looseObject({});

/**
 * The arguments (`chars` long as text) validated against the tool's schema; a schema that throws
 * is an error too. Bounded, an MCP schema whose validation would cost more than MAX_CHECK_WORK
 * checks only that they are an object (the server validates them again).
 */
export function checkArguments(def: ToolDefinition, name: string, value: unknown, bounded: boolean, chars: number): Checked<Record<string, unknown>> {
  const schema = bounded && def.checkCost !== undefined && def.checkCost * chars > MAX_CHECK_WORK ? AN_OBJECT : def.parameters;
  let parsed: ReturnType<ToolDefinition['parameters']['safeParse']>;
  try {
    parsed = schema.safeParse(value);
  } catch (err) {
    return fail(
      `Arguments of ${name} could not be checked against its schema: ${clipText(String((err as Error)?.message ?? err), MAX_NAME_ECHO)}`,
      'The tool schema cannot be applied to these arguments; use another tool or other arguments.',
    );
  }
  if (parsed.success) return { ok: true, value: parsed.data as Record<string, unknown> };
  const issues = describeIssues(parsed.error);
  return fail(`Invalid arguments for ${name}: ${bounded ? clipText(issues, MAX_ISSUES_CHARS) : issues}`, 'Fix the named fields and call the tool again.');
}

/** The name a message shows for a call that names no tool: cut when long (bounded), as text whatever the provider sent. */
export function shownName(name: unknown, bounded: boolean): string {
  return bounded ? clipText(String(name), MAX_NAME_ECHO) : String(name);
}

/** What the model is told when the model activity kept only the first `kept` calls of its reply. */
export function droppedCallsNote(kept: number, dropped: number): string {
  return `[harness] Your reply had ${kept + dropped} tool calls; only the first ${kept} were taken and the other ${dropped} were ignored. Make at most ${kept} calls in one reply.`;
}
