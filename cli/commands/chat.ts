/** `harness chat`: a REPL, one turn per line; questions are asked inline. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { ChatFlags } from '../actions/chat';
import { parseSessionId } from '../args';

export function registerChat(program: Command, ctx: CliContext): void {
  program
    .command('chat')
    .description('Talk to a session line by line (type /exit or Ctrl-D to leave; the session stays)')
    .option('--session <id>', 'continue this session (default: a new one)', parseSessionId)
    .option('--model <model>', 'model name, or scripted:<file>')
    .option('--config <file>', 'config file (default ./harness.config.json)')
    .option('--policy <mode>', 'permission policy mode for a new session: strict, ask (default) or auto')
    .option('--agent <name>', "run a new session as this agent of the worker (its config's `agents`, or createHarnessWorker's): the agent's model, instructions, policy, tools, MCP servers and skills; --model and --policy may only narrow them")
    .action(async (o: ChatFlags) => (await import('../actions/chat')).chat(ctx, o));
}
