/**
 * MCP servers the way a user gets them: a config file named with --config declares them on the
 * background worker the first `run` starts, and sessions name them. A later `run` naming a server
 * that worker never declared is refused in one line saying what it declares and what to do. Real
 * processes: the built CLI, the embedded dev server, a background worker, server-everything.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/global-setup';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { EVERYTHING } from '../support/mcp-servers';

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
