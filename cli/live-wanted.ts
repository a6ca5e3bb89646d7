/**
 * Whether a command shows the live view (cli/live.ts), apart from it: deciding loads nothing, so
 * a command whose view stays off (--json, no terminal) never pays for the watch code's start-up.
 */

/** Whether the live view is for this command: a person at a terminal who did not ask for JSON. */
export function liveWanted(json: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  return !json && Boolean(process.stderr.isTTY) && env.HARNESS_LIVE !== '0';
}

/** Whether colours are wanted on stderr. */
export function stderrColor(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(process.stderr.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}
