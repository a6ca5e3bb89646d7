/**
 * `harness rerun` as a user runs it, under the default policy: a recorded turn that read a
 * fixture, ran a command and wrote a file (approved) is reproduced with its recorded replies and
 * decisions: no model is asked and nobody is asked to approve again. Unchanged, it reports no
 * divergence; with a changed fixture it names the step, the call and both results (exit 1), and
 * `--live-after` goes on with the recorded model from the next step.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';

let h: TestHarness;
let server: ScriptedModelServer;
let env: NodeJS.ProcessEnv;
let turnId: string;
let source: string;
const cli = (args: string[]) => runCli(['rerun', ...args], { env, timeoutMs: 120_000 });
const otherSessions = () => new Set(server.requests.map((q) => q.session).filter((s) => s !== source));

beforeAll(async () => {
  h = await startHarness();
  // Sessions without a script of their own (the live one after a divergence) get this: its
  // second step is the one a live fork from step 2 asks for.
  server = await startScriptedModel({
    script: { steps: [{ content: 'unused' }, { expect: { messages_contain: 'beta' }, content: 'Live after the divergence: the fixture now says beta. HARNESS_OK' }] },
  });
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-rerun-'), 'home') });
  source = newSessionId('rerun-src');
  const ws = path.join(h.home, 'workspaces', source);
  mkdirSync(ws, { recursive: true });
  writeFileSync(path.join(ws, 'data.txt'), 'alpha\n');
  server.registerScript(source, {
    steps: [
      { tool_calls: [{ name: 'read_file', arguments: { path: 'data.txt' } }] },
      { tool_calls: [{ name: 'run_shell', arguments: { command: 'wc -l data.txt' } }] },
      { tool_calls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'summary\n' } }] },
      { content: 'Read, counted and wrote.' },
    ],
  });
  const r = await h.finishApproving(source, endpointConfig(server.url, {}, DEFAULT_POLICY), 'read data.txt, count its lines, write a summary');
  expect(r.terminated_by).toBe('final_answer');
  expect(r.asked.length).toBeGreaterThan(0);
  turnId = r.turnId;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await h?.stop();
  removeTempDirs();
});

describe('harness rerun', () => {
  it('reproduces the turn with no model asked and no approval asked again: no divergence, exit 0', async () => {
    const before = server.requests.length;
    const r = await cli([turnId, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ terminated_by: 'final_answer', steps: 4, rerun: { diverged: false, compared: 4 } });
    expect(r.errLines[0]).toMatch(new RegExp(`^rerunning ${turnId} in session .* with its recorded replies; tools run again in a workspace seeded from the workspace of ${source} as it was when the turn began \\(1 file\\)$`));
    expect(server.requests.length).toBe(before);
  }, 120_000);

  it('names the first divergence when a fixture changed, and --live-after goes on live from the next step', async () => {
    const fixtures = tempDir('harness-rerun-fixtures-');
    writeFileSync(path.join(fixtures, 'data.txt'), 'beta\n');
    const r = await cli([turnId, '--workspace', fixtures, '--live-after']);
    expect(r.code, describeResult(r)).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('diverged at step 1 (t1-s1-c0): a different result of read_file');
    expect(lines[1]).toMatch(/^ {2}recorded: .*alpha/);
    expect(lines[2]).toMatch(/^ {2}now: {6}.*beta/);
    expect(r.errLines.some((l) => /^going on live from step 2 in session .* with openai:test-model$/.test(l))).toBe(true);
    expect(r.stdout).toContain('Live after the divergence: the fixture now says beta. HARNESS_OK');
    // Only the live session asked the model: once, for step 2.
    const live = [...otherSessions()];
    expect(live).toHaveLength(1);
    expect(server.requests.filter((q) => q.session === live[0]).map((q) => q.index)).toEqual([1]);
  }, 180_000);

  it('a diverged rerun without --live-after exits 1; a missing folder is a usage error', async () => {
    const fixtures = tempDir('harness-rerun-fixtures-');
    writeFileSync(path.join(fixtures, 'data.txt'), 'gamma\n');
    const r = await cli([turnId, '--workspace', fixtures]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stdout).toMatch(/^diverged at step 1/);
    const bad = await cli([turnId, '--workspace', '/nonexistent/fixtures']);
    expect(bad.code).toBe(2);
    expect(bad.errLines[0]).toBe('error: /nonexistent/fixtures is not a folder');
    const model = await cli([turnId, '--model', 'scripted:/nonexistent.json']);
    expect(model.code).toBe(2);
    expect(model.errLines[0]).toBe('error: --model goes with --live-after');
    for (const x of [bad, model]) expect(stackLines(x.stderr)).toEqual([]);
  }, 120_000);

  it('--live-after --model scripted:F goes on live with F from its first step', async () => {
    const fixtures = tempDir('harness-rerun-fixtures-');
    writeFileSync(path.join(fixtures, 'data.txt'), 'delta\n');
    const script = writeScript(tempDir('harness-rerun-model-'), { steps: [{ expect: { messages_contain: 'delta' }, content: 'F went on from its first step. HARNESS_OK' }] });
    const r = await cli([turnId, '--workspace', fixtures, '--live-after', '--model', `scripted:${script}`]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines.some((l) => /^going on live from step 2 in session .* with scripted:/.test(l))).toBe(true);
    expect(r.stdout).toContain('F went on from its first step. HARNESS_OK');
  }, 180_000);
});

describe('harness rerun: the workspace as the turn began', () => {
  // A turn that lists the workspace first, then changes it: its rerun must start from the files
  // as they were before the turn (text, binary, an empty folder), not as the turn left them.
  let wsTurn: string;
  let ws: string;
  beforeAll(async () => {
    const id = newSessionId('rerun-ws');
    ws = path.join(h.home, 'workspaces', id);
    mkdirSync(path.join(ws, 'empty'), { recursive: true });
    writeFileSync(path.join(ws, 'data.txt'), 'alpha\n');
    writeFileSync(path.join(ws, 'logo.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0xfe]));
    server.registerScript(id, {
      steps: [
        { tool_calls: [{ name: 'list_files', arguments: { recursive: true } }] },
        { tool_calls: [{ name: 'write_file', arguments: { path: 'data.txt', content: 'more\n', append: true } }] },
        { tool_calls: [{ name: 'write_file', arguments: { path: 'empty/new.txt', content: 'new\n' } }] },
        { tool_calls: [{ name: 'read_file', arguments: { path: 'data.txt' } }] },
        { content: 'Listed, appended, wrote and read.' },
      ],
    });
    const r = await h.finishApproving(id, endpointConfig(server.url, {}, DEFAULT_POLICY), 'list, append, write, read');
    expect(r.terminated_by).toBe('final_answer');
    wsTurn = r.turnId;
  }, 120_000);

  it('reruns from the snapshot its start took: no divergence, though the workspace has changed since', async () => {
    expect(readFileSync(path.join(ws, 'data.txt'), 'utf8')).toBe('alpha\nmore\n');
    const r = await cli([wsTurn, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ terminated_by: 'final_answer', steps: 5, rerun: { diverged: false, compared: 5 } });
    expect(r.errLines[0]).toMatch(/as it was when the turn began \(2 files\)$/);
  }, 120_000);
});
