/**
 * The default rule set of version 2 policies: allow read-only inspection, deny what is
 * destructive, privileged, networked or aimed outside the workspace; everything else falls to
 * the mode (`ask` by default). The sandbox is the real boundary; these rules keep the human in
 * the loop for anything that changes state, and make the obvious escapes fail fast with a reason
 * the model can read. Every pattern is RE2 syntax and linear even for a backtracking engine.
 * A session keeps the rules it started with (freezePolicy): changing them here changes only
 * new sessions. Policies without a version use legacy.ts.
 */
import type { Rule } from './schema';

/** The tool whose `command` argument is parsed as shell code. */
export const SHELL_TOOL = 'run_shell';

/** Programs that only inspect, when given no writing option (options.ts knows which options
 * write; the rules below require `readOnly`). Interpreters (python3, node, sh, awk …) run any
 * code and are never here. */
export const READ_ONLY_PROGRAMS = [
  'ls', 'cat', 'head', 'tail', 'grep', 'egrep', 'fgrep', 'wc', 'sort', 'uniq', 'cut', 'tr', 'echo', 'printf',
  'pwd', 'stat', 'file', 'du', 'tree', 'diff', 'cmp', 'comm', 'basename', 'dirname', 'realpath',
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
  // Long options also as the abbreviations getopt accepts (`--rec`, `--f`); the first letter
  // class leaves out r, R and f so a backtracking engine never retries a split.
  deny('deny-rm-recursive', 'recursive or forced deletion', {
    command: ['rm'],
    anyArg: '^-(-(r(e(c(u(r(s(i(ve?)?)?)?)?)?)?)?|f(o(r(ce?)?)?)?)|[a-eg-qs-zA-QS-Z]*[rRf][a-zA-Z]*)$',
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
  // `of=/dev/` followed by anything but exactly `null`, spelled out (RE2 has no lookahead).
  deny('deny-dd-device', 'writes raw devices', {
    command: ['dd'],
    anyArg: '^of=/dev/($|[^n]|n($|[^u]|u($|[^l]|l($|[^l]|l[\\s\\S]))))',
  }),
  deny('deny-power', 'stops the machine', { command: ['shutdown', 'reboot', 'halt', 'poweroff'] }),
  // Redirections to /dev/null, /dev/stdout, /dev/stderr and /dev/fd/N are not file writes and
  // are not shown to rules, so any other /dev path is a device.
  deny('deny-device-write', 'writes to a device', { redirect: '^/dev/' }),
  deny('deny-etc-write', 'writes system configuration', { redirect: '^/etc(/|$)' }),
  deny('deny-ssh-write', 'writes SSH keys or configuration', { redirect: '^(~|\\$HOME|\\$\\{HOME\\})/\\.ssh(/|$)' }),
  deny('deny-outside-workspace', 'paths must stay inside the workspace', { outsideWorkspace: true }, '*'),
];

const ALLOW_RULES: Rule[] = [
  allow('allow-read-only-tools', 'read-only tool', { risk: ['read_only'] }, '*'),
  allow('allow-inspection', 'read-only inspection', { command: READ_ONLY_PROGRAMS, readOnly: true }),
  allow('allow-find', 'find without -exec, -delete or -fprint', { command: ['find'], readOnly: true }),
  allow('allow-sed', 'sed without -i and without script commands that write, read or run', { command: ['sed'], readOnly: true }),
  ...['status', 'diff', 'log', 'show'].map((sub) =>
    allow(`allow-git-${sub}`, `git ${sub} only reads`, { commandPrefix: `git ${sub}`, readOnly: true }),
  ),
];

/** The default rules of version 2 policies, applied after the policy's own rules unless
 * `defaults: false` (freezePolicy writes them out). */
export const DEFAULT_RULES: readonly Rule[] = [...DENY_RULES, ...ALLOW_RULES];
