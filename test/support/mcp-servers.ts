/** Real MCP servers for the pool tests: specs that start them, and small process helpers. */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { McpHttpSpec, McpStdioSpec } from '../../deterministic/mcp';
import { freePort } from '../../scripts/free-port';

const ROOT = path.join(__dirname, '..', '..');
export const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

export function stdioSpec(name: string, command: string, args: string[], more: Partial<McpStdioSpec> = {}): McpStdioSpec {
  return { name, transport: 'stdio', command, args, env: {}, startupTimeoutMs: 30_000, callTimeoutMs: 30_000, ...more };
}

export function everythingStdio(more: Partial<McpStdioSpec> = {}): McpStdioSpec {
  return stdioSpec('everything', process.execPath, [EVERYTHING, 'stdio'], more);
}

/** server-everything behind `sh`, which appends a line to `spawnsFile` each time it starts (exec keeps the pid). */
export function countedEverything(spawnsFile: string, name = 'counted'): McpStdioSpec {
  return stdioSpec(name, '/bin/sh', ['-c', `echo x >> '${spawnsFile}'; exec '${process.execPath}' '${EVERYTHING}' stdio`]);
}

export function httpSpec(url: string, more: Partial<McpHttpSpec> = {}): McpHttpSpec {
  return { name: 'everything-http', transport: 'http', url, headers: {}, startupTimeoutMs: 30_000, callTimeoutMs: 30_000, ...more };
}

/** Starts server-everything over Streamable HTTP on a free port; resolves once it listens. */
export async function startEverythingHttp(port?: number): Promise<{ url: string; port: number; proc: ChildProcess; stop: () => Promise<void> }> {
  port ??= await freePort();
  const proc = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const listening = new Promise<void>((resolve, reject) => {
    proc.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('listening on port')) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${stderr}`)));
  });
  await Promise.race([listening, sleep(30_000).then(() => Promise.reject(new Error(`server-everything did not listen: ${stderr}`)))]);
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  return { url: `http://127.0.0.1:${port}/mcp`, port, proc, stop };
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls until `check` holds (generous: the test machine may be slow). */
export async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(50);
  }
}

/** The text of a tool result's text items. */
export function textOf(r: { content?: Array<{ type: string; text?: string }> }): string {
  return (r.content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}
