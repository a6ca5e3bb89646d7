/**
 * When a schedule fires, as the CLI's flags and the library's options give it: a cron expression
 * or an interval, a time zone and an overlap policy. Each mistake is a UsageError saying the rule,
 * found before anything connects.
 */
import type { ScheduleOverlapPolicy, ScheduleSpec } from '@temporalio/client';
import { UsageError } from '../machine/errors';

/** What a firing does while the previous firing's turn has not ended. */
export type OverlapName = 'skip' | 'buffer' | 'allow';

/** The overlap names and the policy of Temporal's each stands for. */
export const OVERLAP: Record<OverlapName, ScheduleOverlapPolicy> = { skip: 'SKIP', buffer: 'BUFFER_ONE', allow: 'ALLOW_ALL' };

/** When a schedule fires. */
export interface FiringTimes {
  /** A cron expression of five fields (minute hour day-of-month month day-of-week), or @daily, @hourly … */
  cron?: string;
  /** An interval: `30s`, `10m`, `1h30m`, `1d`, or milliseconds. */
  every?: string | number;
  /** An IANA time zone the cron expression is read in (`Europe/Berlin`; default UTC). */
  timezone?: string;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const EVERY_HINT = 'give a number with a unit: 30s, 10m, 1h30m, 1d (at least 1s)';

/** An interval in milliseconds (at least a second, whole seconds). */
export function parseEvery(value: string | number): number {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else {
    const text = value.trim();
    if (!/^(\d+(ms|s|m|h|d))+$/.test(text)) throw new UsageError(`invalid interval ${JSON.stringify(value)}`, EVERY_HINT);
    ms = [...text.matchAll(/(\d+)(ms|s|m|h|d)/g)].reduce((sum, m) => sum + Number(m[1]) * UNIT_MS[m[2]!]!, 0);
  }
  if (!Number.isSafeInteger(ms) || ms < 1_000 || ms % 1_000 !== 0) throw new UsageError(`invalid interval ${JSON.stringify(value)}: schedules fire in whole seconds, at least 1s apart`, EVERY_HINT);
  return ms;
}

/** `1h30m` for 5 400 000. */
export function everyText(ms: number): string {
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('') || '0s';
}

const CRON_HINT = 'five fields: minute hour day-of-month month day-of-week, e.g. "0 9 * * 1-5" (09:00 on weekdays), or @daily, @hourly';
const CRON_FIELDS: readonly { name: string; max: number; min: number }[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
];

/** A cron expression Temporal takes, checked field by field (Temporal checks it again). */
export function checkCron(expr: string): string {
  const text = expr.trim().replace(/\s+/g, ' ');
  if (/^@(yearly|annually|monthly|weekly|daily|midnight|hourly)$/.test(text)) return text;
  const fields = text.split(' ');
  if (fields.length !== 5) throw new UsageError(`invalid cron expression ${JSON.stringify(expr)}: ${fields.length} fields`, CRON_HINT);
  fields.forEach((field, i) => {
    const rule = CRON_FIELDS[i]!;
    const bad = () => new UsageError(`invalid cron expression ${JSON.stringify(expr)}: the ${rule.name} field ${JSON.stringify(field)}`, CRON_HINT);
    if (!/^[0-9A-Za-z*?,/-]+$/.test(field)) throw bad();
    for (const part of field.split(',')) {
      const [range, step] = part.split('/');
      if (part.split('/').length > 2 || range === '' || (step !== undefined && !/^\d+$/.test(step))) throw bad();
      // Names (JAN, MON) are for Temporal to read; numbers must be in the field's range.
      for (const n of (range ?? '').split('-')) if (/^\d+$/.test(n) && (Number(n) < rule.min || Number(n) > rule.max)) throw bad();
    }
  });
  return text;
}

/** An IANA time zone this machine knows (as Temporal does: both read the tz database). */
export function checkTimezone(tz: string): string {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw new UsageError(`unknown time zone ${JSON.stringify(tz)}`, 'give an IANA time zone name such as UTC, Europe/Berlin or America/New_York');
  }
  return tz;
}

/** An overlap name. */
export function parseOverlap(value: string): OverlapName {
  if (value in OVERLAP) return value as OverlapName;
  throw new UsageError(`unknown overlap policy ${JSON.stringify(value)}`, 'use skip (the default), buffer or allow');
}

/** Temporal's spec for the firing times, and how a listing shows it (`cron 0 9 * * 1-5 Europe/Berlin`, `every 10m`). */
export function firingSpec(t: FiringTimes): { spec: ScheduleSpec; text: string } {
  if (t.cron !== undefined && t.every !== undefined) throw new UsageError('give either a cron expression or an interval, not both', 'use --cron "0 9 * * 1-5" or --every 10m');
  if (t.cron === undefined && t.every === undefined) throw new UsageError('say when the schedule fires', 'use --cron "0 9 * * 1-5" or --every 10m');
  const timezone = t.timezone !== undefined ? checkTimezone(t.timezone) : undefined;
  const zone = timezone ? { timezone } : {};
  if (t.cron !== undefined) {
    const cron = checkCron(t.cron);
    return { spec: { cronExpressions: [cron], ...zone }, text: `cron ${cron}${timezone ? ` ${timezone}` : ''}` };
  }
  const ms = parseEvery(t.every!);
  return { spec: { intervals: [{ every: ms }], ...zone }, text: `every ${everyText(ms)}` };
}
