/**
 * The default rules of policies without a version, frozen: sessions recorded before policy
 * versions replay with exactly these rules (and the JavaScript pattern engine), so their
 * decisions never change. New defaults go to defaults.ts, behind a version.
 *
 * A verbatim copy, except two patterns rewritten into forms that match exactly the same
 * strings without quadratic backtracking (a 32K-character `rm -rrr…` took over a second, and a
 * workflow task over 2 s fails on every replay): the first letter class of `deny-rm-recursive`
 * excludes r, R and f, that of `allow-sed` excludes i, so the first such letter is the one the
 * pattern pivots on. test/deterministic/policy/legacy.test.ts checks the equivalence exhaustively.
 */
import type { Rule } from './schema';

const SHELL_TOOL = 'run_shell';

const LEGACY_READ_ONLY_PROGRAMS = [
  'ls', 'cat', 'head', 'tail', 'grep', 'egrep', 'fgrep', 'wc', 'sort', 'uniq', 'cut', 'tr', 'echo', 'printf',
  'pwd', 'python3', 'stat', 'file', 'du', 'tree', 'diff', 'cmp', 'comm', 'basename', 'dirname', 'realpath',
  'which', 'true', 'false', 'test', '[', 'nl', 'tac', 'rev', 'paste', 'seq', 'md5sum', 'sha256sum',
];

const deny = (id: string, reason: string, when: Rule['when'], tool = SHELL_TOOL): Rule => ({
  id, tool, decision: 'deny', when, reason,
});
const allow = (id: string, reason: string, when: Rule['when'], tool = SHELL_TOOL): Rule => ({
  id, tool, decision: 'allow', when, reason,
});

// Denials first: the first matching deny names the reason, so the specific ones come before
// the general `deny-outside-workspace`.
const LEGACY_DENY_RULES: Rule[] = [
  deny('deny-rm-recursive', 'recursive or forced deletion', {
    command: ['rm'],
    anyArg: '^-(-recursive|-force|[a-eg-qs-zA-QS-Z]*[rRf][a-zA-Z]*)$',
  }),
  deny('deny-privilege', 'runs commands as another user', { command: ['sudo', 'su', 'doas', 'pkexec'] }),
  deny('deny-network-tools', 'network access from the shell; use http_request', {
    command: ['curl', 'wget', 'ssh', 'scp', 'sftp', 'nc', 'ncat', 'netcat', 'telnet', 'ftp', 'socat'],
  }),
  deny('deny-chmod-777', 'world-writable permissions', {
    command: ['chmod'],
    anyArg: '^(0?777|a?[+=]rwx|ugo[+=]rwx|[ao]\\+w)$',
  }),
  deny('deny-mkfs', 'formats file systems', { command: ['mkfs', 'mkfs.*', 'mke2fs', 'mkswap'] }),
  deny('deny-dd-device', 'writes raw devices', { command: ['dd'], anyArg: '^of=/dev/(?!null$)' }),
  deny('deny-power', 'stops the machine', { command: ['shutdown', 'reboot', 'halt', 'poweroff'] }),
  deny('deny-device-write', 'writes to a device', { redirect: '^/dev/(?!(null|stdout|stderr|fd/\\d+)$)' }),
  deny('deny-etc-write', 'writes system configuration', { redirect: '^/etc(/|$)' }),
  deny('deny-ssh-write', 'writes SSH keys or configuration', { redirect: '^(~|\\$HOME|\\$\\{HOME\\})/\\.ssh(/|$)' }),
  deny('deny-outside-workspace', 'paths must stay inside the workspace', { outsideWorkspace: true }, '*'),
];

const LEGACY_ALLOW_RULES: Rule[] = [
  allow('allow-read-only-tools', 'read-only tool', { risk: ['read_only'] }, '*'),
  allow('allow-inspection', 'read-only inspection', { command: LEGACY_READ_ONLY_PROGRAMS }),
  allow('allow-find', 'find without -exec or -delete', {
    command: ['find'],
    noArg: '^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$',
  }),
  allow('allow-sed', 'sed without -i', { command: ['sed'], noArg: '^(-[a-hj-zA-Z]*i.*|--in-place(=.*)?)$' }),
  ...['status', 'diff', 'log', 'show'].map((sub) =>
    allow(`allow-git-${sub}`, `git ${sub} only reads`, { commandPrefix: `git ${sub}` }),
  ),
];

/** The default rules of policies without a version (`defaults: true`, no `version`). */
export const LEGACY_RULES: readonly Rule[] = [...LEGACY_DENY_RULES, ...LEGACY_ALLOW_RULES];

