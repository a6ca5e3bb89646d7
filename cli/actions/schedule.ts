/** What `harness schedule …` does (cli/commands/schedule.ts defines the commands and loads this when one runs). */
import type { CliContext } from '../context';
import type { ScheduleInfo } from '../../api/schedules';
import { firingSpec, parseOverlap } from '../../client/schedule-spec';
import { SCHEDULE_ID } from '../../deterministic/schedule';
import { UsageError } from '../../machine/errors';
import { configForNew } from '../session-flags';
import { readTask } from '../task-input';
import { print, printJson, say } from '../output';
import { snakeKeys } from '../json-casing';

export interface ScheduleCreateFlags {
  file?: string;
  cron?: string;
  every?: string;
  tz?: string;
  overlap?: string;
  id?: string;
  session?: string;
  agent?: string;
  model?: string;
  policy?: string;
  config?: string;
  maxSteps?: number;
  paused?: boolean;
  json?: boolean;
}

export async function create(ctx: CliContext, textArg: string | undefined, o: ScheduleCreateFlags): Promise<void> {
  // Everything that can be checked without a server is, so a mistake makes nothing.
  const times = { ...(o.cron !== undefined ? { cron: o.cron } : {}), ...(o.every !== undefined ? { every: o.every } : {}), ...(o.tz !== undefined ? { timezone: o.tz } : {}) };
  firingSpec(times);
  const overlap = o.overlap === undefined ? undefined : parseOverlap(o.overlap);
  if (o.id !== undefined && !SCHEDULE_ID.test(o.id)) throw new UsageError(`invalid schedule id ${JSON.stringify(o.id)}`, 'use letters, digits, ".", "_" or "-" (at most 64, starting with a letter or digit)');
  if (o.session && (o.agent !== undefined || o.model || o.policy || o.config)) {
    throw new UsageError(`session ${o.session} keeps the model and settings it started with`, 'drop --agent/--model/--policy/--config to send to it, or drop --session to start new sessions');
  }
  const text = await readTask(textArg, o.file);
  const config = configForNew(ctx, o);
  const harness = await ctx.harness({ autostart: true });
  const made = await harness.schedules.create({
    ...times,
    text,
    ...(o.id !== undefined ? { id: o.id } : {}),
    ...(overlap ? { overlap } : {}),
    ...(o.session ? { sessionId: o.session } : {}),
    ...(o.agent !== undefined ? { agent: o.agent } : {}),
    ...(config ? { config } : {}),
    ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}),
    ...(o.paused ? { paused: true } : {}),
  });
  if (o.json) return printJson(snakeKeys(made));
  say(`schedule ${made.id} made: ${made.spec}, sends to ${targetText(made)}${made.paused ? ', paused' : `, next ${made.nextFiring ?? '—'}`}`);
  print(made.id);
}

export async function list(ctx: CliContext, o: { json?: boolean }): Promise<void> {
  const harness = await ctx.harness({ autostart: true });
  const all = await harness.schedules.list();
  if (o.json) return printJson(all.map((s) => snakeKeys(s)));
  if (!all.length) return say('no schedules (make one with `harness schedule create`)');
  const rows = all.map((s) => [s.id, s.spec, s.paused ? 'paused' : (s.nextFiring ?? '—'), String(s.recentFirings.length), s.overlap, targetText(s)]);
  print(table([['ID', 'WHEN', 'NEXT', 'FIRED', 'OVERLAP', 'TARGET'], ...rows]));
}

/** Pause, resume, trigger or delete; says what was done. */
export async function change(ctx: CliContext, what: 'pause' | 'resume' | 'trigger' | 'delete', id: string): Promise<void> {
  if (!SCHEDULE_ID.test(id)) throw new UsageError(`invalid schedule id ${JSON.stringify(id)}`, 'list schedules with `harness schedule list`');
  const harness = await ctx.harness({ autostart: true });
  await harness.schedules[what](id);
  const done = { pause: 'paused', resume: 'resumed', trigger: 'fired once', delete: 'deleted' }[what];
  say(`schedule ${id} ${done}`);
}

function targetText(s: ScheduleInfo): string {
  return 'sessionId' in s.target ? `session ${s.target.sessionId}` : `a new session${s.target.agent ? ` (agent ${s.target.agent})` : ''}`;
}

/** Columns padded to their widest cell. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
