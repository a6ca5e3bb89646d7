/**
 * Streamed model text (a worker with streamText, as the CLI's workers run): `run` on a terminal
 * shows the reply as it arrives, read from the database the worker stores it in (DATABASE_URL,
 * as the worker has it), then the call's line; history keeps only the finished message, the
 * database the streamed pieces; a database that fails while the reply streams loses nothing; an
 * endpoint that refuses to stream is asked plainly. Under the default policy.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, removeTempDirs, tempDir, writeScript } from '../support/cli';
import { runTty } from '../support/terminal';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { fetchRuns } from '../../history/trace/runs';
import type { MessageStore } from '../../activities/store/message-store';
import type { ModelStreams } from '../../activities/store/model-streams';

const WORDS = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
const ANSWER = `Streamed: ${WORDS}`;

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  h = await startHarness({ streamText: true });
  dir = tempDir('harness-cli-stream-');
  // The CLI reads the streamed text from the worker's database (its own HARNESS_HOME holds none).
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: tempDir('harness-cli-stream-home-'), DATABASE_URL: TEST_DATABASE_URL });
}, 120_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('streamed model text', () => {
  it('run on a terminal shows the reply as it arrives; history keeps the finished message only', async () => {
    // The call waits a little first, so the live view sees it running and reads its stream.
    const script = writeScript(dir, { steps: [{ fault: { delay_ms: 700 }, content: ANSWER }] });
    const r = await runTty(['run', '--model', `scripted:${script}`, 'stream it'], { env, cwd: dir });
    // eslint-disable-next-line no-control-regex
    const text = r.text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, '');
    expect(r.code, text).toBe(0);
    const streamed = text.indexOf('\n    Streamed: w0 w1');
    // Nothing marks the streamed text as arriving: no such glyph is left once it has arrived.
    expect(text).not.toContain('… Streamed');
    const line = text.indexOf('step 1 · model scripted');
    expect(streamed, text).toBeGreaterThanOrEqual(0);
    expect(line).toBeGreaterThan(streamed);
    expect(text.slice(streamed, line)).toContain('w59');
    const sessionId = /session (\S+) ·/.exec(text)![1]!;
    // History: one model call, completed once, with the whole reply; nothing of the stream.
    const [run] = await fetchRuns(h.client, `${sessionId}/turn-1`);
    const calls = run!.events.filter((e) => e.kind === 'scheduled' && e.activityType === 'callModel');
    expect(calls).toHaveLength(1);
    const done = run!.events.filter((e) => e.kind === 'activityCompleted');
    expect(done.some((e) => e.kind === 'activityCompleted' && (e.result as { content?: string } | undefined)?.content === ANSWER)).toBe(true);
    // Wherever the reply appears in history, it is whole: no piece of the stream was recorded.
    const found = JSON.stringify(run!.events).split('Streamed:').slice(1);
    expect(found.length).toBeGreaterThan(0);
    // (each from its start: the reply, or a preview of it; at least one whole)
    expect(found.every((s) => s.startsWith(' w0 w1'))).toBe(true);
    expect(found.some((s) => s.includes('w59'))).toBe(true);
    // The database holds the streamed pieces, batched (fewer than the words), the whole reply in order.
    const pieces = await h.store.modelStreams!().read(`${sessionId}/turn-1`, 1, 0, 0);
    expect(pieces.length).toBeGreaterThan(0);
    expect(pieces.length).toBeLessThan(ANSWER.split(' ').length);
    expect(pieces.map((p) => p.text).join('')).toBe(ANSWER);
  });

  it('a database that fails while the reply streams loses nothing: the turn has the whole reply', async () => {
    // The message store works; its streamed text fails from the second write on (a connection lost mid-reply).
    let writes = 0;
    const failing: ModelStreams = {
      append: async (call, text, seq) => {
        if (++writes > 1) throw new Error('Connection terminated unexpectedly');
        return h.store.modelStreams!().append(call, text, seq);
      },
      sweep: async () => 0,
    };
    const store: MessageStore = Object.assign(Object.create(h.store) as MessageStore, { modelStreams: () => failing });
    const broken = await startHarness({ streamText: true, messageStore: async () => store, taskQueue: `${h.taskQueue}-broken` });
    try {
      // Words stream 10 ms apart: several writes of the batched stream.
      const script = { steps: [{ content: ANSWER }] };
      const { turnId } = await sendMessage(broken.client, {
        taskQueue: broken.taskQueue,
        sessionId: newSessionId('stream-lost'),
        config: { model: { provider: 'scripted', model: 'scripted', script }, systemPrompt: 'test', limits: (await import('../../deterministic/session-config')).DEFAULT_LIMITS, policy: DEFAULT_POLICY },
        text: 'stream it',
      });
      const out = await waitForTurn(broken.client, turnId, { pollMs: 100 });
      expect(out.kind === 'done' && out.result.answer).toBe(ANSWER);
      expect(writes).toBeGreaterThan(1); // the failure happened while the reply streamed
    } finally {
      await broken.stop();
    }
  });

  it('an endpoint that refuses to stream is asked plainly, then and after', async () => {
    const seen: boolean[] = [];
    const server: Server = createServer((req, res) => {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw) as { stream?: boolean };
        seen.push(body.stream === true);
        if (body.stream) {
          res.writeHead(400, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ error: { message: 'stream is not supported', type: 'invalid_request_error' } }));
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'plain answer' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
      for (const text of ['first', 'second']) {
        h.declarations.add({ modelEndpoints: [url] });
        const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId: newSessionId(`stream-refused-${text}`), config: { ...endpointConfig(url, {}, DEFAULT_POLICY), toolMode: undefined } as never, text });
        const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
        expect(out.kind === 'done' && out.result.answer).toBe('plain answer');
      }
      // Asked to stream once; plainly from then on.
      expect(seen.filter(Boolean).length).toBeLessThanOrEqual(1);
      expect(seen.filter((s) => !s).length).toBeGreaterThanOrEqual(2);
    } finally {
      server.close();
    }
  });
});
