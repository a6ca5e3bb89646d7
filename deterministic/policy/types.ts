/**
 * Types shared by the shell analysis (shell.ts) and the knowledge of command lines
 * (wrappers.ts, options.ts), kept apart so neither imports the other's module for its types.
 */

/** A word of the command as the program will receive it. */
export interface Arg {
  value: string;
  /** No expansion, glob or brace: the value is exactly what the program receives. */
  literal: boolean;
  /** Why the value is only known at run time, when it matters to an allow rule: parameter,
   * command or arithmetic expansion, brace expansion, or a glob that could leave the workspace.
   * A glob that stays in the workspace (`*.ts`, `src/*`) is not listed. */
  unknown?: string;
  /** The word is a glob: it expands to the names of existing files, whatever they are. */
  glob?: boolean;
  /** What the exact analysis does not read in the word although it has no expansion: an ANSI-C
   * string with escapes, a locale string, tilde expansion. */
  unclear?: string;
  pos: number;
  end: number;
}

/** One program the command would run, with its arguments and the files it is redirected to. */
export interface SimpleCommand {
  /** Program name without its directory (`/usr/bin/sudo` → `sudo`); '' for a bare redirection. */
  program: string;
  args: string[];
  /** The source text the program was found in. */
  text: string;
  /** Files written through `>`, `>>`, `&>`, `>|`, `<>`, including those of an enclosing group. */
  redirects: string[];
  /** Files read through `<` or `<>`. */
  reads: string[];
  /** What launches it, when not the shell itself (`sudo`, `xargs`, `find -exec`, `bash -c`). */
  via?: string;
  /** Words of this program (name or arguments) only known at run time, each with the reason,
   * and a program run from a file outside the system folders (`./cat`); absent when there are
   * none. No allow rule covers such a program (policy version 2). */
  unknown?: string[];
  /** Arguments that are globs (`*.txt`), absent when there are none: they may expand to names
   * that look like options (`-i`) or to more operands than written. */
  globs?: string[];
  /** Words the exact analysis does not read (see Arg.unclear), each with the reason; absent when
   * there are none. The exact analysis allows no such program. */
  unclear?: string[];
}

/** Every program of a command, or why that cannot be known before it runs (with what was found).
 * `settings` lists what changes how later programs run: assignments (`X=1 cmd`, a standalone
 * `X=1`, `env X=1 cmd`, `for X in …`), arithmetic commands and function definitions.
 * `unmodelled` lists the constructs the exact analysis does not model (`[[ … ]]`, `coproc`,
 * expansions in here-documents, builtins that change the shell's state …): under it no program
 * of the command is allowed. Older semantics ignore it, so their decisions replay unchanged. */
export type CommandAnalysis =
  | { ok: true; commands: SimpleCommand[]; settings: string[]; unmodelled: string[] }
  | { ok: false; reason: string; commands: SimpleCommand[]; settings: string[]; unmodelled: string[] };
