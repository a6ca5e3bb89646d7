/**
 * The built-in tools of the harness (definitions only; see activities/tools for execution). Their
 * parameters are built when first read (defineLazyTool): a workflow builds only those it uses.
 * The reads are `parallel`: consecutive calls of them in a step run together (call-groups.ts).
 */
import { z } from 'zod';
import { defineLazyTool, ToolRegistry } from './tools';

const finishTool = defineLazyTool({
  name: 'finish',
  description:
    'End the turn with a final answer for the user. Use when the task is complete. Arguments: answer (the text shown to the user).',
  parameters: () => z.object({ answer: z.string().describe('The final answer shown to the user.') }),
  risk: 'read_only',
  runsIn: 'workflow',
});

const askUserTool = defineLazyTool({
  name: 'ask_user',
  description:
    'Ask the human user a question and wait for the answer. Use only when you cannot proceed without information only the user has. Returns the answer text.',
  parameters: () => z.object({ question: z.string().min(1).describe('The question to ask, self-contained.') }),
  risk: 'read_only',
  runsIn: 'workflow',
});

const rememberTool = defineLazyTool({
  name: 'remember',
  description:
    'Store a fact in working memory (key/value) for the rest of this session; it is shown to you at later steps and turns.',
  parameters: () => z.object({
    key: z.string().min(1).max(100).describe('Short name of the fact.'),
    value: z.string().max(2000).describe('The fact to remember; empty string forgets the key.'),
  }),
  risk: 'read_only',
  runsIn: 'workflow',
});

/**
 * Sleeps the turn on a durable timer (no model call while it waits); `harness wake` ends it early.
 * read_only: it changes nothing outside, so the default policy allows it. Checked in deterministic/wait.ts.
 */
export const waitTool = defineLazyTool({
  name: 'wait',
  description:
    'Pause this turn without using the model, then continue: give seconds (how long from now) or until (an ISO 8601 time with its zone), and a reason. ' +
    'Use it to check back later on something that takes time. A person may wake you early. Returns how long you slept, the time now, and whether you were woken early (by whom, why).',
  parameters: () => z.object({
    seconds: z.number().optional().describe('How long to wait from now, in seconds.'),
    until: z.string().optional().describe('Wait until this time (ISO 8601 with zone, e.g. 2026-01-31T09:00:00Z).'),
    reason: z.string().describe('What you are waiting for (shown to people while you wait).'),
  }),
  risk: 'read_only',
  runsIn: 'workflow',
});

export const getCurrentTimeTool = defineLazyTool({
  name: 'get_current_time',
  description: 'Return the current date and time (ISO 8601, UTC, plus the given IANA time zone when provided).',
  parameters: () => z.object({ timezone: z.string().optional().describe('IANA zone such as Europe/Paris.') }),
  runsIn: 'local_activity',
  risk: 'read_only',
  timeoutMs: 5_000,
  parallel: true,
});

export const readFileTool = defineLazyTool({
  name: 'read_file',
  description:
    'Read a text file from the session workspace. Arguments: path (relative to the workspace), optional max_bytes. Returns the content (truncated when larger than max_bytes).',
  parameters: () => z.object({
    path: z.string().min(1).describe('File path relative to the workspace.'),
    max_bytes: z.number().int().positive().max(1_000_000).optional().describe('Read at most this many bytes (default 100000).'),
  }),
  runsIn: 'local_activity',
  risk: 'read_only',
  timeoutMs: 10_000,
  parallel: true,
});

export const writeFileTool = defineLazyTool({
  name: 'write_file',
  description:
    'Write (or append to) a text file in the session workspace, creating parent folders. Arguments: path, content, optional append. Returns bytes written.',
  parameters: () => z.object({
    path: z.string().min(1).describe('File path relative to the workspace.'),
    content: z.string().describe('Text to write.'),
    append: z.boolean().optional().describe('Append instead of overwriting.'),
  }),
  runsIn: 'local_activity',
  risk: 'write',
  blobArgs: ['content'],
  timeoutMs: 10_000,
});

export const listFilesTool = defineLazyTool({
  name: 'list_files',
  description:
    'List files and folders in the session workspace. Arguments: optional path (default "."), optional recursive. Returns entries with type and size.',
  parameters: () => z.object({
    path: z.string().optional().describe('Folder relative to the workspace (default ".").'),
    recursive: z.boolean().optional().describe('Walk sub-folders too (at most 1000 entries).'),
  }),
  runsIn: 'local_activity',
  risk: 'read_only',
  timeoutMs: 10_000,
  parallel: true,
});

export const httpRequestTool = defineLazyTool({
  name: 'http_request',
  description:
    'Make an HTTP request. Arguments: url, optional method, headers, body, timeout_ms. Returns status, headers and body (capped in size).',
  parameters: () => z.object({
    url: z.url().describe('Absolute http(s) URL.'),
    method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.string().optional(),
    timeout_ms: z.number().int().positive().max(60_000).optional(),
  }),
  risk: 'network',
  blobArgs: ['body'],
  timeoutMs: 65_000,
});

/**
 * The longest run_shell command accepted (UTF-16 units). The policy parses and judges every
 * command inside the workflow, where a task running over 2 s fails, on every replay: at 32 Ki
 * the worst pathological command (thousands of pipes, deep nesting) takes a few hundred ms on a
 * shared 2-core machine (npm run bench:policy), and a real command line is far shorter (longer
 * content belongs in write_file).
 */
export const MAX_SHELL_COMMAND = 32_768;

export const runShellTool = defineLazyTool({
  name: 'run_shell',
  description:
    'Run a shell command (/bin/sh -c) in an isolated Linux sandbox whose current folder /workspace is the session workspace (the same files as read_file/write_file). ' +
    'No network; python3, coreutils, grep, sed, find available; /tmp is scratch space (not executable). Arguments: command, optional timeout_ms (default 60000). ' +
    'Returns exit_code, stdout, stderr (long output keeps its start and end), truncated, duration_ms.',
  parameters: () => z.object({
    command: z.string().min(1).max(MAX_SHELL_COMMAND).describe('The shell command line, run in /workspace.'),
    timeout_ms: z.number().int().positive().max(600_000).optional().describe('Kill the command after this many ms (default 60000).'),
  }),
  risk: 'dangerous',
  timeoutMs: 620_000,
});

export const rememberLongtermTool = defineLazyTool({
  name: 'remember_longterm',
  description:
    'Save a fact to long-term memory (kept across sessions in this namespace). Use for decisions, preferences and results worth knowing next time. Argument: text.',
  parameters: () => z.object({ text: z.string().min(1).max(4000).describe('The fact, self-contained.') }),
  // A write: what is stored here is preloaded into every later session of the namespace, so an
  // instruction injected through a tool result must not reach it without a human's approval.
  risk: 'write',
  timeoutMs: 15_000,
});

export const recallTool = defineLazyTool({
  name: 'recall',
  description:
    'Search long-term memory by relevance and recency (works for any language). Arguments: query, optional top_k (default 5). Returns matching entries with their dates.',
  parameters: () => z.object({
    query: z.string().min(1).describe('What to look for.'),
    top_k: z.number().int().positive().max(50).optional().describe('How many entries (default 5).'),
  }),
  risk: 'read_only',
  timeoutMs: 15_000,
  parallel: true,
});

export const useSkillTool = defineLazyTool({
  name: 'use_skill',
  description:
    'Load the instructions of a skill listed in the system message (its SKILL.md body); its scripts are mounted read-only at /skills/<name> for run_shell. Argument: name.',
  parameters: () => z.object({ name: z.string().min(1).describe('Skill name from the index.') }),
  risk: 'read_only',
  source: 'skill',
  runsIn: 'local_activity',
  timeoutMs: 10_000,
  parallel: true,
});

/** Every built-in tool. */
export const BUILTIN_TOOLS = [
  finishTool,
  askUserTool,
  rememberTool,
  getCurrentTimeTool,
  readFileTool,
  writeFileTool,
  listFilesTool,
  runShellTool,
  httpRequestTool,
  useSkillTool,
  rememberLongtermTool,
  recallTool,
  waitTool,
];

/** The registry of built-ins; building it checks every definition. */
export function builtinRegistry(): ToolRegistry {
  return new ToolRegistry(BUILTIN_TOOLS);
}
