/**
 * The git subcommands the default rules let run (status, diff, log, show), each with a curated
 * list of the options that only shape what is shown. git has hundreds of options, and some
 * write (`--output`), run programs (`--ext-diff`, `--textconv`, `--show-signature` runs gpg) or
 * point git elsewhere (`-C`, which after a subcommand means copy detection, is left out so it
 * is never read as the global one): anything not listed asks. What a repository's own configuration makes git
 * do is the sandbox's concern (docs/security.md).
 */
import { parseOptions } from './getopt';
import { longOptions } from './table';
import type { ProgramSpec } from './spec';

const DIFF_LONG =
  'patch no-patch unified= raw patch-with-raw stat=? compact-summary numstat shortstat dirstat=? summary patch-with-stat ' +
  'name-only name-status color=? no-color word-diff=? word-diff-regex= color-words=? no-renames find-renames=? ' +
  'find-copies=? find-copies-harder check full-index binary abbrev=? diff-filter= text ignore-cr-at-eol ' +
  'ignore-space-at-eol ignore-space-change ignore-all-space ignore-blank-lines inter-hunk-context= function-context ' +
  'no-ext-diff no-textconv src-prefix= dst-prefix= no-prefix line-prefix= relative=? no-relative minimal patience ' +
  'histogram diff-algorithm= indent-heuristic no-indent-heuristic ';

const LOG_LONG =
  'oneline max-count= skip= since= after= until= before= author= committer= grep= all-match invert-grep ' +
  'regexp-ignore-case basic-regexp extended-regexp fixed-strings merges no-merges min-parents= max-parents= first-parent ' +
  'all branches=? tags=? remotes=? graph decorate=? no-decorate source reverse follow date= relative-date format= ' +
  'pretty=? abbrev-commit no-abbrev-commit topo-order date-order author-date-order left-right cherry-pick cherry-mark ' +
  'boundary full-history ancestry-path encoding= no-notes log-size parents children full-diff quiet ';

const SUBCOMMANDS: Readonly<Record<string, ProgramSpec>> = {
  status: {
    flags: 'sbvuz',
    long: longOptions(
      'short branch porcelain=? long verbose untracked-files=? ignored=? ignore-submodules=? null no-column ' +
        'ahead-behind no-ahead-behind renames no-renames find-renames=? show-stash no-show-stash',
    ),
  },
  diff: {
    valued: 'U',
    flags: 'pusRzabwqMBW',
    long: longOptions(`${DIFF_LONG}cached staged merge-base no-index exit-code quiet`),
  },
  log: { valued: 'nUSG', flags: 'psuzMBwbiEF', numeric: true, long: longOptions(DIFF_LONG + LOG_LONG) },
  show: { valued: 'nUSG', flags: 'psuzMBwbiEF', numeric: true, long: longOptions(DIFF_LONG + LOG_LONG) },
};

/** Why `git <args>` is not read-only, or undefined when it is a listed subcommand with listed options. */
export function inspectGit(args: readonly string[]): string | undefined {
  const [sub, ...rest] = args;
  if (sub === undefined || !Object.hasOwn(SUBCOMMANDS, sub)) {
    return `\`git${sub === undefined ? '' : ` ${sub.slice(0, 40)}`}\` is not a git command the policy knows as read-only`;
  }
  const parsed = parseOptions(`git ${sub}`, rest, SUBCOMMANDS[sub]!);
  return 'unsure' in parsed ? parsed.unsure : undefined;
}
