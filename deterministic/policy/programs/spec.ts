/**
 * What the exact analysis knows of a program's command line, as data: every option it has, which
 * of them take a value, and which write files, run programs or read file names the policy cannot
 * see. A word the table does not know makes an invocation "not understood", so it asks.
 */

/** How a long option takes a value: never, always (`--opt v` or `--opt=v`), or only with `=`. */
export type LongKind = 'flag' | 'value' | 'optional';

/** A program's command line as the policy knows it. */
export interface ProgramSpec {
  /** Short options that take a value (the rest of the word, or the next word). */
  valued?: string;
  /** Every other short option. */
  flags?: string;
  /** Every long option (getopt_long accepts any unambiguous prefix). */
  long?: Record<string, LongKind>;
  /** `-NUM` is an option (`head -5`, `grep -3`, `seq -1 3`). */
  numeric?: boolean;
  /** Options (short letter or long name) the policy refuses as read-only, with what they do. */
  refuse?: Record<string, string>;
  /** Options whose value is a pattern or code, never a file name (`grep -e`, `sed -e`). */
  code?: readonly string[];
  /** The first operand is a pattern or script (grep, sed) unless one of these options gives it. */
  codeOperandUnless?: readonly string[];
  /** More operands than this are refused, with the reason (`uniq`'s second operand is written). */
  maxOperands?: { count: number; why: string };
  /** No word is an option: the program prints or tests its arguments (echo, test, true). */
  free?: true;
  /** For `free` programs: words refused anywhere, with the reason. */
  refuseWords?: Record<string, string>;
}
