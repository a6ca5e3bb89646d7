/**
 * What the `harness` CLI puts on a terminal, byte for byte: run through pipes, or under a
 * pseudo-terminal (util-linux `script`) so that it takes its TTY paths (inline prompts, colours,
 * a progress line), answering prompts as a person would. Output is checked as decoded UTF-8:
 * a C1 control is a character (U+0080–U+009F), not the byte 0x9B inside some other character.
 */
import { spawn, spawnSync } from 'node:child_process';
import { HARNESS_BIN, tempDir } from './cli';

/** What one run left: stdout and stderr as bytes (merged under a pty, where both are the terminal). */
export interface TerminalResult {
  code: number | null;
  out: Buffer;
  err: Buffer;
  /** Everything as text, for assertion messages and visible-text checks. */
  text: string;
}

/** A reply typed when the output so far (from the last reply on) matches `after`. */
export interface Reply {
  after: RegExp;
  send: string;
}

export interface TerminalOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Lines for standard input: all at once through a pipe, or typed after prompts on a pty. */
  input?: string;
  replies?: Reply[];
  timeoutMs?: number;
}

/** Whether util-linux `script` is there to give the CLI a pseudo-terminal. */
export function haveScript(): boolean {
  return spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') ?? false;
}

/** `harness ...args` with stdin, stdout and stderr on pipes. */
export function runPiped(args: string[], opts: TerminalOptions): Promise<TerminalResult> {
  const child = spawn(process.execPath, [HARNESS_BIN, ...args], { cwd: opts.cwd ?? tempDir(), env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end(opts.input ?? '');
  return collect(child, opts.timeoutMs, () => undefined);
}

/**
 * `harness ...args` on a pseudo-terminal: `script -qfec CMD /dev/null` runs it with stdin, stdout
 * and stderr on a pty and copies what the pty shows to its stdout. Replies are typed in order,
 * each once the output since the previous one matches (the pty echoes them back).
 */
export function runTty(args: string[], opts: TerminalOptions): Promise<TerminalResult> {
  const command = [process.execPath, HARNESS_BIN, ...args].map(shellQuote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: opts.cwd ?? tempDir(),
    env: { ...opts.env, SHELL: '/bin/sh' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const replies = [...(opts.replies ?? [])];
  let from = 0;
  return collect(child, opts.timeoutMs, (sofar) => {
    const next = replies[0];
    if (!next || !next.after.test(sofar.slice(from))) return;
    replies.shift();
    from = sofar.length;
    child.stdin.write(next.send);
  });
}

function collect(child: ReturnType<typeof spawn>, timeoutMs = 90_000, onOutput: (sofar: string) => void): Promise<TerminalResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout!.on('data', (d: Buffer) => {
    out.push(d);
    onOutput(Buffer.concat(out).toString('utf8'));
  });
  child.stderr!.on('data', (d: Buffer) => err.push(d));
  child.stdin!.on('error', () => undefined); // a process that exits before reading its input
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      const o = Buffer.concat(out);
      const e = Buffer.concat(err);
      resolve({ code, out: o, err: e, text: `${o.toString('utf8')}${e.length ? `\n--- stderr\n${e.toString('utf8')}` : ''}` });
    });
  });
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * The raw ESC, BEL and C1 controls in bytes a terminal would receive, each with what surrounds
 * it (empty when there are none). Bytes that are not UTF-8 count too: a terminal may read a lone
 * 0x9B as CSI. `allowed` are sequences our own code writes on purpose (colours), removed first.
 */
export function rawControls(bytes: Buffer, allowed: RegExp[] = []): string[] {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return ['the output is not valid UTF-8'];
  }
  for (const re of allowed) text = text.replace(re, '');
  const found: string[] = [];
  // eslint-disable-next-line no-control-regex
  for (const m of text.matchAll(/[\u001b\u0007\u0080-\u009f]/gu)) {
    const at = m.index!;
    found.push(`U+${m[0].charCodeAt(0).toString(16).padStart(4, '0')} at ${at}: ${JSON.stringify(text.slice(Math.max(0, at - 30), at + 30))}`);
  }
  return found;
}
