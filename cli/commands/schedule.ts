/** `harness schedule create|list|pause|resume|trigger|delete`: messages sent to agents at set times (Temporal Schedules). */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { ScheduleCreateFlags } from '../actions/schedule';
import { parseMaxSteps, parseSessionId } from '../args';

const ID = '<id>';
const ID_HELP = 'the schedule (see `harness schedule list`)';

// The actions load the Temporal client only when they run.
const act = () => import('../actions/schedule');

export function registerSchedule(program: Command, ctx: CliContext): void {
  const schedule = program
    .command('schedule')
    .description('Send a message to an agent at set times (cron or an interval): each firing starts a new session, or sends to an existing one');

  schedule
    .command('create')
    .description('Make a schedule; each firing sends the message as `harness run` does and waits for that turn to end')
    .argument('[text]', 'the message each firing sends; `-` reads it from standard input')
    .option('--file <path>', 'read the message from a file')
    .option('--cron <expr>', 'when to fire: a cron expression of five fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5", or @daily, @hourly')
    .option('--every <interval>', 'when to fire: an interval such as 30s, 10m, 1h30m or 1d (instead of --cron)')
    .option('--tz <zone>', 'the IANA time zone --cron is read in, e.g. Europe/Berlin (default UTC)')
    .option(
      '--overlap <policy>',
      "what a firing does while the previous firing's turn has not ended (still running or waiting on a person): skip (default: it does not fire), buffer (it fires once that turn ends; one is kept) or allow (it fires anyway)",
    )
    .option('--id <id>', 'the schedule id (default sched-<random>): letters, digits, ".", "_", "-"; new sessions are named <id>-<firing time>')
    .option('--session <id>', 'send to this existing session at each firing (default: each firing starts a new session)', parseSessionId)
    .option('--agent <name>', "new sessions run as this agent of the worker (its config's `agents`, or createHarnessWorker's)")
    .option('--model <model>', 'model of the new sessions (an endpoint model name, or scripted:<file>)')
    .option('--policy <mode>', 'permission policy mode of the new sessions: strict, ask (default) or auto')
    .option('--config <file>', 'config file the new sessions start from (default ./harness.config.json)')
    .option('--max-steps <n>', "step limit of each firing's turn", parseMaxSteps)
    .option('--paused', 'make it paused (start it with `harness schedule resume`)')
    .option('--json', 'print the schedule as JSON')
    .addHelpText(
      'after',
      '\nEach firing appears in `harness sessions` (new sessions show their schedule) and its turn in `harness trace`.\n' +
        'A firing whose session does not exist, has ended or is busy fails with the session\'s reason (see the Temporal UI).\n' +
        'Examples:\n' +
        '  harness schedule create --cron "0 9 * * 1-5" --tz Europe/Berlin --agent support "Summarize open tickets"\n' +
        '  harness schedule create --every 10m --session s-20260101-090000-abc123 "Any news?"',
    )
    .action(async (text: string | undefined, o: ScheduleCreateFlags) => (await act()).create(ctx, text, o));

  schedule
    .command('list')
    .description("List the harness's schedules: id, when, next firing, paused, whom it sends to")
    .option('--json', 'print them as JSON')
    .action(async (o: { json?: boolean }) => (await act()).list(ctx, o));

  schedule
    .command('pause')
    .description('Pause a schedule: it fires no more until resumed')
    .argument(ID, ID_HELP)
    .action(async (id: string) => (await act()).change(ctx, 'pause', id));

  schedule
    .command('resume')
    .description('Resume a paused schedule')
    .argument(ID, ID_HELP)
    .action(async (id: string) => (await act()).change(ctx, 'resume', id));

  schedule
    .command('trigger')
    .description('Fire a schedule once now, whatever its overlap policy (paused or not)')
    .argument(ID, ID_HELP)
    .action(async (id: string) => (await act()).change(ctx, 'trigger', id));

  schedule
    .command('delete')
    .description('Delete a schedule (firings already started go on)')
    .argument(ID, ID_HELP)
    .action(async (id: string) => (await act()).change(ctx, 'delete', id));
}
