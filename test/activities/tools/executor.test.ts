import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolExecutor } from '../../../activities/tools/executor';
import { getCurrentTime } from '../../../activities/tools/time';

const FIXED = new Date('2024-03-06T12:34:56.789Z'); // a Wednesday
let home: string;

beforeEach(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'executor-test-')));
});

afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

function executor() {
  return createToolExecutor({ home, now: () => FIXED });
}

describe('createToolExecutor', () => {
  it('writes then reads a file in the session workspace, created on demand', async () => {
    const ex = executor();
    expect(await ex.execute({ sessionId: 's1', name: 'write_file', args: { path: 'notes/a.txt', content: 'hi' } })).toMatchObject({ ok: true });
    expect(fs.readFileSync(path.join(home, 'workspaces/s1/notes/a.txt'), 'utf8')).toBe('hi');
    const r = await ex.execute({ sessionId: 's1', name: 'read_file', args: { path: 'notes/a.txt' } });
    expect(r.result).toMatchObject({ content: 'hi' });
  });

  it('keeps sessions apart: one session cannot see another session\'s files', async () => {
    const ex = executor();
    await ex.execute({ sessionId: 's1', name: 'write_file', args: { path: 'a.txt', content: 'mine' } });
    expect(await ex.execute({ sessionId: 's2', name: 'read_file', args: { path: 'a.txt' } })).toMatchObject({ error_type: 'FILE_NOT_FOUND' });
    expect(await ex.execute({ sessionId: 's2', name: 'read_file', args: { path: '../s1/a.txt' } })).toMatchObject({
      error_type: 'PATH_OUTSIDE_WORKSPACE',
    });
  });

  it('lists an empty new workspace', async () => {
    const r = await executor().execute({ sessionId: 's1', name: 'list_files', args: {} });
    expect(r).toEqual({ ok: true, result: { path: '.', entries: [], truncated: false } });
  });

  it('returns INVALID_ARGUMENTS naming the field for a wrong argument type', async () => {
    const r = await executor().execute({ sessionId: 's1', name: 'read_file', args: { path: 42 } });
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS', recoverable: true });
    expect(r.message).toContain('path');
  });

  it('returns INVALID_ARGUMENTS when the arguments are not an object at all', async () => {
    expect(await executor().execute({ sessionId: 's1', name: 'list_files', args: 'oops' })).toMatchObject({ error_type: 'INVALID_ARGUMENTS' });
  });

  it('returns a recoverable UNKNOWN_TOOL listing the available tools', async () => {
    const r = await executor().execute({ sessionId: 's1', name: 'rm_rf', args: {} });
    expect(r).toMatchObject({ ok: false, error_type: 'UNKNOWN_TOOL', recoverable: true });
    for (const name of ['read_file', 'write_file', 'list_files', 'http_request', 'get_current_time']) {
      expect(r.suggestion).toContain(name);
    }
  });

  it('treats workflow-side tools such as finish as unknown here', async () => {
    expect(await executor().execute({ sessionId: 's1', name: 'finish', args: { answer: 'x' } })).toMatchObject({ error_type: 'UNKNOWN_TOOL' });
  });

  it.each(['../escape', 'a/b', ''])('refuses the bad session id %j without creating anything', async (sessionId) => {
    const r = await executor().execute({ sessionId, name: 'write_file', args: { path: 'x.txt', content: 'x' } });
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS', recoverable: false });
    expect(r.message).toContain('session id');
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it('does not create a workspace for tools that need none', async () => {
    await executor().execute({ sessionId: 's1', name: 'get_current_time', args: {} });
    expect(fs.existsSync(path.join(home, 'workspaces'))).toBe(false);
  });

  it('answers get_current_time from the injected clock', async () => {
    const r = await executor().execute({ sessionId: 's1', name: 'get_current_time', args: { timezone: 'Europe/Paris' } });
    expect(r.result).toMatchObject({ iso: FIXED.toISOString(), local: '2024-03-06T13:34:56+01:00' });
  });
});

describe('getCurrentTime', () => {
  it('returns UTC by default with iso, unix_ms, local time and weekday', () => {
    expect(getCurrentTime({}, () => FIXED)).toEqual({
      ok: true,
      result: { iso: '2024-03-06T12:34:56.789Z', unix_ms: FIXED.getTime(), timezone: 'UTC', local: '2024-03-06T12:34:56+00:00', weekday: 'Wednesday' },
    });
  });

  it('renders local time with the zone offset, including half-hour offsets', () => {
    expect(getCurrentTime({ timezone: 'Asia/Kolkata' }, () => FIXED).result).toMatchObject({
      timezone: 'Asia/Kolkata',
      local: '2024-03-06T18:04:56+05:30',
    });
    expect(getCurrentTime({ timezone: 'America/New_York' }, () => FIXED).result).toMatchObject({ local: '2024-03-06T07:34:56-05:00' });
  });

  it('normalises the case of a zone name', () => {
    expect(getCurrentTime({ timezone: 'europe/paris' }, () => FIXED).result).toMatchObject({ timezone: 'Europe/Paris' });
  });

  it('returns INVALID_ARGUMENTS naming timezone for an unknown zone', () => {
    const r = getCurrentTime({ timezone: 'Mars/Olympus_Mons' }, () => FIXED);
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS', recoverable: true });
    expect(r.message).toMatch(/^timezone:/);
    expect(r.message).toContain('Mars/Olympus_Mons');
  });

  it('answers every zone as a formatter of its own would, through the bounded formatter cache (more zones than it keeps, twice over)', () => {
    const zones = Intl.supportedValuesOf('timeZone');
    expect(zones.length).toBeGreaterThan(200);
    const expected = (tz: string) => new Intl.DateTimeFormat('en-US', { timeZone: tz, timeZoneName: 'longOffset' }).formatToParts(FIXED).find((p) => p.type === 'timeZoneName')!.value;
    for (const round of [1, 2]) {
      for (const tz of round === 1 ? zones : [...zones].reverse()) {
        const r = getCurrentTime({ timezone: tz }, () => FIXED).result as { local: string };
        const offset = expected(tz) === 'GMT' ? '+00:00' : expected(tz).replace('GMT', '');
        expect(r.local.endsWith(offset), `${tz} in round ${round}`).toBe(true);
      }
    }
    // An unknown zone is refused after the cache is full, as before.
    expect(getCurrentTime({ timezone: 'Mars/Olympus_Mons' }, () => FIXED)).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
  });
});
