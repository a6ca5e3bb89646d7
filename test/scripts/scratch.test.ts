import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli';

/** Runs a scratch harness (what every benchmark runs on) in its own process; its output and its home. */
function scratchRun(): Promise<{ code: number | null; output: string; home: string }> {
  const program = `
    const { withScratchHarness } = require(${JSON.stringify(path.join(ROOT, 'dist', 'scripts', 'scratch.js'))});
    withScratchHarness('scratch-test', async (s) => { console.log('home ' + s.home); console.log('figures'); })
      .then(() => setTimeout(() => process.exit(0), 3000), (e) => { console.error(e); process.exit(1); });`;
  const child = spawn(process.execPath, ['-e', program], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  // 'close' waits for every writer of the pipes: the dev server, had it inherited them, too.
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output, home: /home (\S+)/.exec(output)?.[1] ?? '' })));
}

describe('a scratch harness (benchmarks, scripts)', () => {
  it("prints only the script's own output: the dev server logs to the home's server log, even as it shuts down", async () => {
    const r = await scratchRun();
    expect(r.code, r.output).toBe(0);
    expect(r.output.trim().split('\n'), r.output).toEqual([`home ${r.home}`, 'figures']);
    const logs = readdirSync(r.home, { recursive: true }).map(String).filter((f) => f.endsWith('.log'));
    expect(logs.length, `no server log under ${r.home}`).toBeGreaterThan(0);
    const text = logs.map((f) => readFileSync(path.join(r.home, f), 'utf8')).join('');
    expect(text.length, 'the server wrote nothing to its log').toBeGreaterThan(0);
    rmSync(r.home, { recursive: true, force: true });
  }, 120_000);
});
