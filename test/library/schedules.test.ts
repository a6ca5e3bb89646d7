/**
 * harness.schedules: a schedule that sends to an existing session adds a turn to it at each
 * firing; a firing for a session that has ended fails saying so; list and describe show what
 * was made; mistakes are UsageErrors before anything is made.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HarnessClient } from '../../api/client';
import { UsageError, UserError } from '../../machine/errors';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { sessionState } from '../../client/session-client';
import { listSessions } from '../../client/session-list';

let h: TestHarness;
let harness: HarnessClient;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined>, tries = 120): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await check();
    if (v !== undefined) return v;
    await sleep(500);
  }
  throw new Error(`gave up waiting for ${what}`);
}

const steps = Array.from({ length: 20 }, (_, i) => ({ content: `Check ${i + 1} done.` }));

beforeAll(async () => {
  h = await startHarness();
  harness = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {} });
});
afterAll(async () => {
  await h?.stop();
});

describe('harness.schedules', () => {
  it('sends to an existing session at each firing: two firings, two more turns of that session', async () => {
    const sessionId = newSessionId('sched-target');
    await h.finish(sessionId, scriptedConfig({ steps }), 'first, by hand');
    const id = `to-session-${Date.now().toString(36)}`;
    const made = await harness.schedules.create({ id, every: 2_000, sessionId, text: 'Any news?', overlap: 'buffer' });
    expect(made).toMatchObject({ id, spec: 'every 2s', overlap: 'buffer', paused: false, target: { sessionId }, text: 'Any news?' });
    expect((await h.client.schedule.getHandle(id).describe()).policies.overlap).toBe('BUFFER_ONE');

    const state = await until('two firings', async () => {
      const s = await sessionState(h.client, sessionId);
      return s.turnCount >= 3 && s.status === 'idle' ? s : undefined;
    });
    expect(state.turnCount).toBeGreaterThanOrEqual(3);
    const recent = (await harness.schedules.describe(id)).recentFirings;
    expect(recent.length).toBeGreaterThanOrEqual(2);
    const firing = await h.client.workflow.getHandle(recent[0]!.workflowId).result();
    expect(firing).toMatchObject({ sessionId, turnId: `${sessionId}/turn-2`, outcome: 'final_answer' });

    const listed = await until('the list', async () => (await harness.schedules.list({ taskQueue: h.taskQueue })).find((s) => s.id === id));
    expect(listed.target).toEqual({ sessionId });
    await harness.schedules.delete(id);
    await expect(harness.schedules.describe(id)).rejects.toThrow(`no schedule named ${id}`);
  });

  it('a session a firing started keeps its schedule past continue-as-new', async () => {
    const id = `renewed-${Date.now().toString(36)}`;
    // Continued as new after its first turn: the listing reads the latest run, whose memo Temporal carries over.
    await harness.schedules.create({ id, cron: '0 0 1 1 *', text: 'Report', config: scriptedConfig({ steps }, { continueAsNewAfterEvents: 5 }) });
    await harness.schedules.trigger(id);
    const firing = await until('the firing', async () => (await harness.schedules.describe(id)).recentFirings[0]);
    const { sessionId } = (await h.client.workflow.getHandle(firing.workflowId).result()) as { sessionId: string };
    await until('the continued run', async () => {
      const statuses: string[] = [];
      for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${sessionId}'` })) statuses.push(wf.status.name);
      return statuses.includes('CONTINUED_AS_NEW') && statuses.includes('RUNNING') ? true : undefined;
    });
    const row = (await listSessions(h.client, { limit: 50, taskQueue: h.taskQueue })).find((r) => r.session_id === sessionId);
    expect(row).toMatchObject({ schedule: id, turns: 1 });
    await harness.schedules.delete(id);
  });

  it('a firing for a session that has ended fails saying so', async () => {
    const sessionId = newSessionId('sched-ended');
    await h.finish(sessionId, scriptedConfig({ steps }), 'only turn');
    const id = `to-ended-${Date.now().toString(36)}`;
    await harness.schedules.create({ id, cron: '0 0 1 1 *', timezone: 'Europe/Berlin', sessionId, text: 'hello?' });
    await harness.end(sessionId);
    await until('the session to end', async () => ((await h.client.workflow.getHandle(sessionId).describe()).status.name === 'COMPLETED' ? true : undefined));
    await harness.schedules.trigger(id);
    const firing = await until('the firing', async () => (await harness.schedules.describe(id)).recentFirings[0]);
    const err = await h.client.workflow.getHandle(firing.workflowId).result().then(() => undefined, (e: Error) => e);
    expect(String((err?.cause as Error | undefined)?.cause?.message ?? err?.cause?.message)).toMatch(`session ${sessionId} has ended`);
    await harness.schedules.delete(id);
  });

  it('starts paused when asked, and refuses mistakes before making anything', async () => {
    const id = `paused-${Date.now().toString(36)}`;
    const made = await harness.schedules.create({ id, cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', text: 'Morning report', model: 'scripted:none.json', paused: true }).catch((e: Error) => e);
    // A scripted model needs its file: the same check `run` makes, before anything is made.
    expect(made).toBeInstanceOf(UserError);
    expect((made as Error).message).toMatch(/none\.json/);
    const ok = await harness.schedules.create({ id, cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', text: 'Morning report', model: 'gpt-4o-mini', paused: true });
    expect(ok).toMatchObject({ id, spec: 'cron 0 9 * * 1-5 Europe/Berlin', paused: true, target: { newSession: true } });
    expect(ok.nextFiring).toBeUndefined();
    await expect(harness.schedules.create({ id, every: '1h', text: 'again', model: 'gpt-4o-mini' })).rejects.toThrow(`a schedule named ${id} exists`);
    await harness.schedules.delete(id);

    await expect(harness.schedules.create({ every: '1h', cron: '@daily', text: 'x' })).rejects.toBeInstanceOf(UsageError);
    await expect(harness.schedules.create({ every: '1h', text: '  ' })).rejects.toThrow(/non-empty/);
    await expect(harness.schedules.create({ every: '1h', text: 'x', sessionId: 'no-such-session-here' })).rejects.toThrow('no session named no-such-session-here');
    await expect(harness.schedules.create({ every: '1h', text: 'x', timezone: 'Nowhere/Else' })).rejects.toThrow(/unknown time zone/);
    await expect(harness.schedules.pause('never-made')).rejects.toThrow('no schedule named never-made');
  });
});
