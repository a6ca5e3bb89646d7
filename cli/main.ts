/**
 * `harness`: the command-line interface. main() sets process.exitCode rather than exiting,
 * so tests can call it; user mistakes print one line and a hint, bugs print their stack.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { projectRoot } from '../machine/paths';
import { UserError } from '../machine/errors';
import { createContext } from './context';
import { registerApprovals } from './commands/approvals';
import { registerWake } from './commands/wake';
import { registerSend } from './commands/send';
import { registerShow } from './commands/show';
import { registerChat } from './commands/chat';
import { registerInspect } from './commands/inspect';
import { registerReplay } from './commands/replay';
import { registerRetry } from './commands/retry';
import { registerCancel } from './commands/cancel';
import { registerFork } from './commands/fork';
import { registerRerun } from './commands/rerun';
import { registerEval } from './commands/eval';
import { registerRun } from './commands/run';
import { registerSandbox } from './commands/sandbox';
import { registerServe } from './commands/serve';
import { registerSkills } from './commands/skills';
import { registerMcp } from './commands/mcp';
import { registerTrust } from './commands/trust';
import { registerTrace } from './commands/trace';
import { registerCost } from './commands/cost';
import { registerConsole } from './commands/console';
import { registerHome } from './commands/home';
import { registerPending } from './commands/pending';
import { registerSchedule } from './commands/schedule';
import { escapeForTerminal } from '../machine/terminal/escape';
import { installLeanProto } from '../client/lean-proto/install';
import { CLIENT_COMMANDS } from './client-commands';
import { EXIT, say } from './output';

/** Builds the command tree. */
export function buildProgram(env: NodeJS.ProcessEnv = process.env): Command {
  const ctx = createContext(env);
  const program = new Command('harness')
    .description('A durable agent harness: every session is a Temporal workflow, every turn a child workflow.')
    .version(packageVersion(), '-V, --version', 'print the harness version and exit')
    .showSuggestionAfterError(true)
    .exitOverride(usageExit('harness'))
    .configureOutput({ outputError: () => {} })
    .addHelpText(
      'after',
      '\nEnvironment: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, HARNESS_TASK_QUEUE, HARNESS_HOME, HARNESS_MODEL,\n' +
        'HARNESS_POLICY, OPENAI_API_KEY, OPENAI_BASE_URL, HARNESS_CONFIG, DOCKER_HOST. See docs/configuration.md.',
    );
  registerRun(program, ctx);
  registerChat(program, ctx);
  registerInspect(program, ctx);
  registerReplay(program, ctx);
  registerRetry(program, ctx);
  registerCancel(program, ctx);
  registerFork(program, ctx);
  registerRerun(program, ctx);
  registerEval(program, ctx);
  registerApprovals(program, ctx);
  registerWake(program, ctx);
  registerSend(program, ctx);
  registerPending(program, ctx);
  registerSchedule(program, ctx);
  registerShow(program, ctx);
  registerServe(program, ctx);
  registerSandbox(program, ctx);
  registerSkills(program, ctx);
  registerMcp(program, ctx);
  registerTrust(program, ctx);
  registerTrace(program, ctx);
  registerCost(program, ctx);
  registerConsole(program, ctx);
  registerHome(program, ctx);
  for (const cmd of program.commands) cmd.exitOverride(usageExit(`harness ${cmd.name()}`)).configureOutput({ outputError: () => {} });
  for (const cmd of program.commands) {
    for (const sub of cmd.commands) sub.exitOverride(usageExit(`harness ${cmd.name()} ${sub.name()}`)).configureOutput({ outputError: () => {} });
  }
  return program;
}

/** A commander error that knows which command it is about (for the hint), thrown as commander expects. */
type UsageErrorOf = CommanderError & { commandPath?: string };

function usageExit(commandPath: string): (err: CommanderError) => never {
  return (err) => {
    (err as UsageErrorOf).commandPath ??= commandPath;
    throw err;
  };
}

/** Commander's message as one line: its suggestion ("(Did you mean --policy?)") joins the line. */
export function usageLine(message: string): string {
  return message
    .replace(/^error: /i, '')
    .replace(/\s*\n\s*\(Did you mean (.+?)\)\s*$/s, ' (did you mean $1)')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The version in the package's own package.json (read, not copied, so it cannot drift from a release). */
export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(projectRoot(), 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

/** Runs the CLI with argv (without node and script). */
export async function main(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
  // Client commands load the Temporal API's definitions a part at a time.
  if (CLIENT_COMMANDS.has(argv[0] ?? '')) installLeanProto();
  const program = buildProgram(env);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    process.exitCode = report(err);
  }
}

function report(err: unknown): number {
  if (err instanceof CommanderError) {
    // --help and --version end with a "clean" CommanderError.
    if (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.help') return EXIT.ok;
    const where = (err as UsageErrorOf).commandPath ?? 'harness';
    say(`error: ${escapeForTerminal(usageLine(err.message))}`);
    say(`hint: see \`${where} --help\``);
    return EXIT.usage;
  }
  if (err instanceof UserError) {
    // One line, whatever the message carries (a model's or a tool's text, a file's name).
    say(`error: ${escapeForTerminal(err.message)}`);
    if (err.hint) say(`hint: ${err.hint}`);
    return err.exitCode;
  }
  reportBug(err);
  return EXIT.error;
}

/** A bug's stack for a person, escaped like all output (its message may quote a model or a tool). */
export function reportBug(err: unknown): void {
  say(`unexpected error (a bug; please report it):\n${(err as Error)?.stack ?? String(err)}`);
}
