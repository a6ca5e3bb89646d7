/**
 * sed's command line (GNU sed 4.9) as data, and where its script comes from: every `-e` /
 * `--expression`, or else the first operand. The script itself is read by sed-script.ts.
 */
import type { Option } from './getopt';
import type { ProgramSpec } from './spec';
import { longOptions } from './table';

/** sed's options; `-i`, `-s` (only for in-place editing) and `-f` (a script file) are refused. */
export const SED: ProgramSpec = {
  valued: 'efl',
  flags: 'bnrEsuzi',
  long: longOptions(
    'quiet silent debug expression= file= follow-symlinks in-place=? line-length= posix regexp-extended separate ' +
      'sandbox unbuffered null-data zero-terminated binary help version',
  ),
  refuse: {
    i: 'edits files in place', 'in-place': 'edits files in place',
    s: 'is only used with in-place editing', separate: 'is only used with in-place editing',
    f: 'reads a sed script the policy cannot see', file: 'reads a sed script the policy cannot see',
  },
  code: ['e', 'expression'],
  codeOperandUnless: ['e', 'expression', 'f', 'file'],
};

/** The script pieces of a parsed sed command line, with the index of the word holding each. */
export function sedScripts(parsed: { options: Option[]; operands: string[]; operandAt: number[] }): { value: string; at: number }[] {
  const given = parsed.options
    .filter((o) => o.name === 'e' || o.name === 'expression')
    .map((o) => ({ value: o.value ?? '', at: o.at ?? -1 }));
  if (given.length) return given;
  const [value] = parsed.operands;
  return value === undefined ? [] : [{ value, at: parsed.operandAt[0]! }];
}
