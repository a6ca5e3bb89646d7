/** `harness cost <id> [--json]`: what a session, a turn or an eval run cost, from its Temporal history. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { parseSessionOrAnyTurnId } from '../args';

// The action loads its implementation (the Temporal client, the ledger) when it runs.
export function registerCost(program: Command, ctx: CliContext): void {
  program
    .command('cost')
    .description('What a session (every turn), a turn or an eval run cost, from its history: tokens and money by turn, kind of call (model, compression, corrections, retry waste) and model')
    .argument('<id>', "a session id, a turn id (<session>/turn-N), a sub-agent's turn id (<session>/turn-N/agent-<call id>) or an eval id", parseSessionOrAnyTurnId)
    .option('--json', 'print the ledger as JSON (USD; null where the model has no price)')
    .option('--calls', "read every call from the turns' events (with --json: each call listed); by default a closed turn's recorded tally is read")
    .addHelpText(
      'after',
      '\nEvery completed model call counts once, with the usage its activity recorded; attempts that failed are retry waste (with the tokens\n' +
        'the provider reported for them). Prices: the one the session was started with (`prices` in harness.config.json over the\n' +
        'dated default table); a model without a price shows tokens only; a local or scripted model is free unless priced.',
    )
    .action(async (id: string, o: { json?: boolean; calls?: boolean }) => (await import('../actions/cost')).showCost(ctx, id, o));
}
