/**
 * get_current_time. Runs as an activity because reading the clock is non-deterministic;
 * `now` is injected so tests are exact.
 */
import type { z } from 'zod';
import type { getCurrentTimeTool } from '../../deterministic/builtin-tools';
import { toolError, toolOk } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';

/** Validated arguments of get_current_time. */
type GetCurrentTimeArgs = z.infer<typeof getCurrentTimeTool.parameters>;

// Building a formatter costs ~0.4 ms (more than the call around it), so each zone's is kept;
// bounded, since the zone comes from the model (only names Intl accepts are ever kept).
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 64;

/** The formatter of a zone; throws Intl's RangeError for an unknown one. */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = FORMATTERS.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
      timeZoneName: 'longOffset',
    });
    if (FORMATTERS.size >= MAX_FORMATTERS) FORMATTERS.delete(FORMATTERS.keys().next().value!);
    FORMATTERS.set(timeZone, f);
  }
  return f;
}

/** The current instant as UTC ISO, unix ms, and local wall-clock time (with offset) in the zone (default UTC). */
export function getCurrentTime(args: GetCurrentTimeArgs, now: () => Date = () => new Date()): ToolResult {
  let formatter: Intl.DateTimeFormat;
  try {
    formatter = formatterFor(args.timezone ?? 'UTC');
  } catch (err) {
    // Intl signals an unknown zone with RangeError; anything else is a bug.
    if (!(err instanceof RangeError)) throw err;
    return toolError('INVALID_ARGUMENTS', `timezone: unknown time zone ${JSON.stringify(args.timezone)}`, {
      suggestion: 'use an IANA time zone name such as "Europe/Paris", "America/New_York" or "UTC"',
    });
  }
  const date = now();
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(date)) parts[part.type] = part.value;
  // longOffset renders "GMT+05:30", or bare "GMT" for a zero offset.
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : (parts.timeZoneName ?? '').replace('GMT', '');
  // ICU canonicalises to legacy ids (Asia/Kolkata -> Asia/Calcutta); echo the caller's name, fixing only case.
  const requested = args.timezone ?? 'UTC';
  const resolved = formatter.resolvedOptions().timeZone;
  const timezone = resolved.toLowerCase() === requested.toLowerCase() ? resolved : requested;
  return toolOk({
    iso: date.toISOString(),
    unix_ms: date.getTime(),
    timezone,
    local: `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`,
    // Models are unreliable at deriving the weekday from a date, so say it.
    weekday: parts.weekday,
  });
}
