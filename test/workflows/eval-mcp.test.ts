/**
 * The repository's MCP eval suite (evals/mcp.jsonl with evals/mcp.config.json: server-everything
 * over stdio, calls approved or not by each case) on real Temporal: every case ends as designed, and each trial's
 * turn got the server's tool set by reference (the list's hash in its input, read back once).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resolveSessionConfig } from '../../config/resolve';
import type { TurnInput } from '../../deterministic/session';
import { followEval, startEval } from '../../evals/runner/run';
import { parseSuite } from '../../evals/runner/suite';
import { decodePayload } from '../../history/trace/events';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { removeTempDirs, tempDir, writeScript } from '../support/cli';

const EVALS = path.join(__dirname, '..', '..', 'evals');
let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

it('runs the MCP suite with the tool set passed to each trial by reference', async () => {
  const file = path.join(EVALS, 'mcp.config.json');
  // Each case brings its own script (scriptedPerCase); the session's is empty.
  const config = resolveSessionConfig({ config: file, model: `scripted:${writeScript(tempDir('harness-eval-mcp-'), { steps: [] })}` }, {}, EVALS);
  h.declareConfig(file);
  const suite = parseSuite(readFileSync(path.join(EVALS, 'mcp.jsonl'), 'utf8'), 'mcp.jsonl');
  const evalId = newSessionId('eval-mcp');
  await startEval(h.client, h.taskQueue, suite, { concurrency: 2, trials: 1, config, model: 'scripted', scriptedPerCase: true }, evalId);
  const summary = await followEval(h.client, evalId, () => undefined);
  // Each case as designed: the one that runs without approval fails on purpose.
  expect(summary.cases.map((c) => [c.id, c.passed])).toEqual(suite.cases.map((c) => [c.id, (c as { expect?: string }).expect !== 'fail']));
  // A trial's turn: the set by reference in its input, its list read back once.
  const turns = [];
  for await (const w of h.client.workflow.list({ query: `WorkflowType = 'turnWorkflow' AND WorkflowId STARTS_WITH '${evalId}'` })) turns.push(w.workflowId);
  expect(turns.length).toBeGreaterThan(0);
  const events = (await h.client.workflow.getHandle(turns[0]!).fetchHistory()).events!;
  const input = decodePayload(events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]) as TurnInput;
  expect(input.mcpTools).toMatchObject({ tools: [], stored: true });
  expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'loadMcpTools')).toHaveLength(1);
}, 300_000);
