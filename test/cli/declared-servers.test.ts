/**
 * MCP servers the way a user gets them: a config file named with --config declares them on the
 * background worker the first `run` starts, and sessions name them. A later `run` naming a server
 * that worker never declared is refused in one line saying what it declares and what to do. Real
 * processes: the built CLI, the embedded dev server, a background worker, server-everything.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { cliEnv, describeResult, HARNESS_BIN, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { kill } from '../support/processes';
import { spawn } from 'node:child_process';
import { EVERYTHING, until } from '../support/mcp-servers';

describe('MCP servers declared by the config a background worker starts with', () => {
  const dir = tempDir('harness-declared-cli-');
  let env: NodeJS.ProcessEnv;
  const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 120_000 });

  beforeAll(async () => {
    const port = await freePort();
    let uiPort = await freePort();
    while (uiPort === port) uiPort = await freePort();
    env = cliEnv({ HARNESS_HOME: path.join(dir, 'home'), HARNESS_EMBEDDED_PORT: String(port), HARNESS_UI_PORT: String(uiPort), XDG_CONFIG_HOME: path.join(dir, 'xdg') });
    const server = (name: string) => ({ mcpServers: { [name]: { command: process.execPath, args: [EVERYTHING, 'stdio'], decision: 'allow' } } });
    writeFileSync(path.join(dir, 'tools.json'), JSON.stringify(server('everything')));
    writeFileSync(path.join(dir, 'other.json'), JSON.stringify(server('other')));
  });
  afterAll(async () => {
    await runCli(['dev', '--stop'], { env, cwd: dir, timeoutMs: 30_000 }).catch(() => undefined);
    removeTempDirs();
  });

  it('`run --config` starts a worker that declares the file\'s servers, and the session calls one', async () => {
    const script = writeScript(dir, {
      steps: [
        { tool_calls: [{ name: 'mcp__everything__echo', arguments: { message: 'DECLARED_ECHO' } }] },
        { expect: { last_message_contains: 'DECLARED_ECHO' }, content: 'The server echoed. HARNESS_OK' },
      ],
    });
    const r = await cli(['run', '--config', 'tools.json', '--model', `scripted:${script}`, '--json', 'echo something']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ answer: 'The server echoed. HARNESS_OK', terminated_by: 'final_answer' });
  });

  it('a session naming a server that worker did not declare is refused in one line with what to do', async () => {
    const script = writeScript(dir, { steps: [{ content: 'never' }] });
    const r = await cli(['run', '--config', 'other.json', '--model', `scripted:${script}`, 'hello']);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines.at(-2)).toMatch(/^error: session \S+ was refused: MCP server "other" is not declared on this worker \(it declares everything\)$/);
    expect(r.errLines.at(-1)).toMatch(/^hint: declare it on the worker .*`harness dev --stop`/);
    expect(stackLines(r.stderr)).toEqual([]);
  });
});

describe('`harness worker --config`', () => {
  it('declares the servers and endpoint of the file it is given, and says so in one line as it starts', async () => {
    const dir = tempDir('harness-worker-config-');
    writeFileSync(path.join(dir, 'w.json'), JSON.stringify({ mcpServers: { files: { command: process.execPath, args: [EVERYTHING, 'stdio'] } }, baseUrl: 'http://127.0.0.1:8080/v1' }));
    const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `declared-${randomUUID()}`, HARNESS_HOME: path.join(dir, 'home') });
    const worker = spawn(process.execPath, [HARNESS_BIN, 'worker', '--config', 'w.json'], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let output = '';
      for (const stream of [worker.stdout!, worker.stderr!]) stream.on('data', (d: Buffer) => (output += d.toString()));
      await until(() => /^declared: .*$/m.test(output), 60_000);
      expect(output).toMatch(/^declared: mcp servers files; model endpoints \S*http:\/\/127\.0\.0\.1:8080/m);
    } finally {
      await kill(worker, 'SIGTERM');
    }
  });
});
