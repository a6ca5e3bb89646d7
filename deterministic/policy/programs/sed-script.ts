/**
 * A scanner for sed scripts (GNU sed syntax) that finds the commands which write files, read
 * files or run programs: `w`/`W` (write), `r`/`R` (read any file, the workspace check cannot see
 * it), `e` (run a command) and the `w`/`e` flags of `s`. When the scanner is not sure what a
 * script does, it says so: the caller treats that as "not read-only".
 *
 * Two readings of labels (`:x`, `b x`, `t x`, `T x`) and of `v`'s argument. `exact`: as GNU sed
 * reads them, up to whitespace or `;`, after which the next command starts (`:x w out` writes a
 * file), and only plain label characters are understood. `v2`: up to `;` or a newline, which
 * hides such a command; kept only so turns judged with it replay unchanged.
 */

/** How labels are read: as GNU sed does (`exact`), or as version 2 policies did. */
type LabelReading = 'exact' | 'v2';

/** Why a sed script is not read-only (a command that writes, reads or runs, or a script the
 * scanner cannot follow), or undefined when it only edits the stream. */
export function sedScriptProblem(script: string, labels: LabelReading = 'exact'): string | undefined {
  const s = new Scanner(script, labels);
  return s.run();
}

// Characters of a label the exact reading understands; anything else (quotes, `#`, `}`) asks.
const LABEL = /^[A-Za-z0-9_.-]+$/;

const SIMPLE = new Set(['=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F']);
const WITH_NUMBER = new Set(['l', 'L', 'q', 'Q']);
const WITH_LABEL = new Set(['b', 't', 'T']);
const WITH_TEXT = new Set(['a', 'i', 'c']);
const FILES: Record<string, string> = {
  w: 'the sed command `w` writes a file',
  W: 'the sed command `W` writes a file',
  r: 'the sed command `r` reads a file',
  R: 'the sed command `R` reads a file',
};

class Scanner {
  private i = 0;

  constructor(
    private readonly src: string,
    private readonly labels: LabelReading,
  ) {}

  run(): string | undefined {
    let depth = 0;
    for (;;) {
      this.skip(' \t\n;');
      if (this.i >= this.src.length) return depth === 0 ? undefined : 'unbalanced `{` in the sed script';
      const c = this.src[this.i];
      if (c === '#') {
        this.toEndOfLine();
        continue;
      }
      if (c === '}') {
        if (--depth < 0) return 'unbalanced `}` in the sed script';
        this.i++;
        if (!this.endOfCommand()) return 'unexpected text after `}` in the sed script';
        continue;
      }
      const address = this.addresses();
      if (address) return address;
      this.skip(' \t');
      while (this.src[this.i] === '!') {
        this.i++;
        this.skip(' \t');
      }
      const cmd = this.src[this.i++];
      if (cmd === undefined) return 'a sed address without a command';
      if (cmd === '{') {
        depth++;
        continue;
      }
      const problem = this.command(cmd);
      if (problem) return problem;
    }
  }

  /** One command after its address; leaves the position after it. */
  private command(cmd: string): string | undefined {
    if (SIMPLE.has(cmd)) return this.endOfCommand() ? undefined : `unexpected text after the sed command \`${cmd}\``;
    if (WITH_NUMBER.has(cmd)) {
      this.skip(' \t');
      while (/[0-9]/.test(this.src[this.i] ?? '')) this.i++;
      return this.endOfCommand() ? undefined : `unexpected text after the sed command \`${cmd}\``;
    }
    if (WITH_LABEL.has(cmd) || cmd === ':' || cmd === 'v') return this.label(cmd);
    if (WITH_TEXT.has(cmd)) {
      this.text();
      return undefined;
    }
    if (cmd in FILES) return FILES[cmd];
    if (cmd === 'e') return 'the sed command `e` runs a command';
    if (cmd === 's') return this.substitute();
    if (cmd === 'y') {
      const delim = this.src[this.i++];
      if (!this.delimiter(delim) || !this.part(delim!) || !this.part(delim!)) return 'an unterminated sed `y` command';
      return this.endOfCommand() ? undefined : 'unexpected text after the sed command `y`';
    }
    return `the sed command \`${cmd}\` is not known to the policy`;
  }

  /** A label (or `v`'s version). GNU sed skips blanks, then reads up to whitespace or `;`. */
  private label(cmd: string): string | undefined {
    if (this.labels === 'v2') {
      if (cmd === 'v') this.toEndOfCommand();
      else while (this.i < this.src.length && this.src[this.i] !== '\n' && this.src[this.i] !== ';') this.i++;
      return undefined;
    }
    this.skip(' \t');
    const start = this.i;
    while (this.i < this.src.length && !/[\s;]/.test(this.src[this.i]!)) this.i++;
    const label = this.src.slice(start, this.i);
    if (label === '' && (cmd === ':' || cmd === 'v')) return cmd === ':' ? 'a sed `:` without a label' : undefined;
    if (label !== '' && !LABEL.test(label)) return `the sed label \`${label.slice(0, 40)}\` is not understood by the policy`;
    return undefined;
  }

  private substitute(): string | undefined {
    const delim = this.src[this.i++];
    if (!this.delimiter(delim) || !this.part(delim!) || !this.part(delim!)) return 'an unterminated sed `s` command';
    for (;;) {
      const f = this.src[this.i];
      if (f === undefined || f === '\n' || f === ';' || f === '}' || f === '#') return undefined;
      if (f === 'w') return 'the `w` flag of the sed command `s` writes a file';
      if (f === 'e') return 'the `e` flag of the sed command `s` runs a command';
      if (!/[gpiImM0-9 \t]/.test(f)) return `the flag \`${f}\` of the sed command \`s\` is not known to the policy`;
      this.i++;
    }
  }

  /** Zero, one or two addresses (`3`, `$`, `/re/I`, `\%re%`, `first~step`, `addr,+N`, `0,/re/`). */
  private addresses(): string | undefined {
    if (!this.address()) return undefined;
    this.skip(' \t');
    if (this.src[this.i] !== ',') return undefined;
    this.i++;
    this.skip(' \t');
    const c = this.src[this.i];
    if (c === '+' || c === '~') {
      this.i++;
      if (!this.digits()) return 'a sed address `+`/`~` without a number';
      return undefined;
    }
    return this.address() ? undefined : 'a sed address range without its end';
  }

  private address(): boolean {
    const c = this.src[this.i];
    if (c === '$') {
      this.i++;
      return true;
    }
    if (c !== undefined && /[0-9]/.test(c)) {
      this.digits();
      if (this.src[this.i] === '~') {
        this.i++;
        this.digits();
      }
      return true;
    }
    if (c === '/' || c === '\\') {
      this.i++;
      const delim = c === '/' ? '/' : this.src[this.i++];
      if (!this.delimiter(delim) || !this.part(delim!)) {
        // An unterminated address: let the caller's command check fail on the end of input.
        this.i = this.src.length;
        return true;
      }
      while (this.src[this.i] === 'I' || this.src[this.i] === 'M') this.i++;
      return true;
    }
    return false;
  }

  private digits(): boolean {
    const start = this.i;
    while (/[0-9]/.test(this.src[this.i] ?? '')) this.i++;
    return this.i > start;
  }

  private delimiter(c: string | undefined): boolean {
    return c !== undefined && c !== '\n' && c !== '\\';
  }

  /** Skips to just after the next unescaped delimiter; false when there is none. */
  private part(delim: string): boolean {
    while (this.i < this.src.length) {
      const c = this.src[this.i++];
      if (c === '\\') this.i++;
      else if (c === delim) return true;
    }
    return false;
  }

  /** The text of `a`, `i`, `c`: up to an unescaped newline (one-line GNU form or `a\` form). */
  private text(): void {
    while (this.i < this.src.length) {
      const c = this.src[this.i++];
      if (c === '\\') this.i++;
      else if (c === '\n') return;
    }
  }

  private endOfCommand(): boolean {
    this.skip(' \t');
    const c = this.src[this.i];
    return c === undefined || c === '\n' || c === ';' || c === '}' || c === '#';
  }

  private toEndOfCommand(): void {
    while (this.i < this.src.length && this.src[this.i] !== '\n' && this.src[this.i] !== ';') this.i++;
  }

  private toEndOfLine(): void {
    while (this.i < this.src.length && this.src[this.i] !== '\n') this.i++;
  }

  private skip(chars: string): void {
    while (this.i < this.src.length && chars.includes(this.src[this.i]!)) this.i++;
  }
}
