/**
 * A command's read that makes many Temporal calls under one abort signal (`harness sessions`
 * lists each session with several) prints no MaxListenersExceededWarning: the client adds a
 * listener to the signal for each call and never removes it (client/calls-abort.ts).
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { readUntil, TroubleWait } from '../../client/trouble-wait';
import { look } from '../../client/wait-progress';

let connection: Connection;
let client: Client;
const warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);

beforeAll(async () => {
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
  process.on('warning', onWarning);
});
beforeEach(() => {
  warnings.length = 0;
});
afterAll(async () => {
  process.off('warning', onWarning);
  await connection.close();
});

/** Thirty calls one after another, as a listing of ten sessions makes. */
async function manyCalls(): Promise<number> {
  for (let i = 0; i < 30; i++) await client.workflowService.getSystemInfo({});
  return 30;
}

const leaks = () => warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'));

describe('many calls under one signal', () => {
  it('readUntil (what sessions, status and the console read through) leaks no listener warning', async () => {
    expect(await readUntil(client, manyCalls, new TroubleWait({ deadline: Date.now() + 60_000 }))).toBe(30);
    await new Promise((r) => setImmediate(r));
    expect(leaks()).toEqual([]);
  });

  it('look leaks none either', async () => {
    expect(await look(client, 'no-such-workflow', 'server', manyCalls, 60_000)).toEqual({ ok: true, value: 30 });
    await new Promise((r) => setImmediate(r));
    expect(leaks()).toEqual([]);
  });
});
