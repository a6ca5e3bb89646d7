/**
 * The default rule set: allow read-only inspection, deny what is destructive, privileged, networked
 * or aimed outside the workspace; everything else falls to the mode (`ask` by default).
 * The sandbox is the real boundary; these rules keep the human in the loop for anything that
 * changes state, and make the obvious escapes fail fast with a reason the model can read.
 */
import type { Rule } from './schema';

/** The tool whose `command` argument is parsed as shell code. */
export const SHELL_TOOL = 'run_shell';

/** Programs that only inspect (their writing options are excluded by the rules below). */
export const READ_ONLY_PROGRAMS = [
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
const DENY_RULES: Rule[] = [
  deny('deny-rm-recursive', 'recursive or forced deletion', {
    command: ['rm'],
    anyArg: '^-(-recursive|-force|[a-zA-Z]*[rRf][a-zA-Z]*)$',
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

const ALLOW_RULES: Rule[] = [
  allow('allow-read-only-tools', 'read-only tool', { risk: ['read_only'] }, '*'),
  allow('allow-inspection', 'read-only inspection', { command: READ_ONLY_PROGRAMS }),
  allow('allow-find', 'find without -exec or -delete', {
    command: ['find'],
    noArg: '^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$',
  }),
  allow('allow-sed', 'sed without -i', { command: ['sed'], noArg: '^(-[a-zA-Z]*i.*|--in-place(=.*)?)$' }),
  ...['status', 'diff', 'log', 'show'].map((sub) =>
    allow(`allow-git-${sub}`, `git ${sub} only reads`, { commandPrefix: `git ${sub}` }),
  ),
];

/** The default rules, applied after the config's own rules unless `defaults: false`. */
export const DEFAULT_RULES: readonly Rule[] = [...DENY_RULES, ...ALLOW_RULES];
