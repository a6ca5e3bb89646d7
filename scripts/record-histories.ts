/**
 * Records reference histories into test/histories/: a session exercising the turn loop
 * (tool calls, a tool error, malformed arguments, working memory, ask_user answered, finish,
 * approvals, continue-as-new), one with MCP tools, one that compresses its context, one whose
 * turn failed on a model outage and was retried (`harness retry`: a reset run), a fork of it at
 * step 2 and a rerun of it (recorded replies and decisions), and a long turn that crosses the
 * thresholds of workflows/turn/replay-constants.ts, all run by the current code. CI replays every stored history against the code of the day,
 * so a workflow change that breaks running sessions fails the build (change logic behind
 * patched()). Usage: npm run build && node dist/scripts/record-histories.js <label>
 */
import path from 'node:path';
import { writeHistories } from './history-files';
import { runScript, withScratchHarness } from './scratch';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { answerQuestion, decideApprovals, endSession, sendMessage } from '../client/session-client';
import { waitForTurn } from '../client/turn-wait';
import { parsePolicy } from '../deterministic/policy/schema';
import { freezePolicy } from '../deterministic/policy';
import { resolveMcpServers } from '../config/mcp';
import { mcpServerRef } from '../deterministic/mcp';
import { DEFAULT_COMPRESSION } from '../deterministic/context/plan';
import { planRetry, resetTurn } from '../history/retry';
import { retryTurnUpdate } from '../deterministic/messages';
import { planFork } from '../history/fork';
import { planRerun } from '../history/rerun';
import { startForked, waitForState } from '../client/fork-start';

const script = {
  steps: [
    { tool_calls: [{ name: 'list_files', arguments: {} }] },
    {
      tool_calls: [
        { name: 'write_file', arguments: { path: 'notes.md', content: '# Notes\n' } },
        { name: 'read_file', arguments: { path: 'missing.md' } },
      ],
    },
    { tool_calls: [{ name: 'read_file', arguments: '{"path": ' }] },
    { tool_calls: [{ name: 'remember', arguments: { key: 'project', value: 'durable harness' } }] },
    { tool_calls: [{ name: 'run_shell', arguments: { command: 'sudo id' } }, { name: 'run_shell', arguments: { command: 'ls' } }] },
    { content: 'Turn one done.' },
    { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
    { expect: { last_message_contains: 'blue' }, tool_calls: [{ name: 'finish', arguments: { answer: 'Blue it is.' } }] },
  ],
};

/** A session with MCP tools: an approved call, a server question answered, a server that never started, bad arguments. */
const mcpScript = {
  steps: [
    { tool_calls: [{ name: 'mcp__everything__echo', arguments: { message: 'recorded' } }] },
    { tool_calls: [{ name: 'mcp__everything__trigger-elicitation-request', arguments: {} }] },
    {
      tool_calls: [
        { name: 'mcp__broken__anything', arguments: {} },
        { name: 'mcp__everything__get-sum', arguments: { a: 'one', b: 2 } },
      ],
    },
    { content: 'MCP done.' },
  ],
};

/** A session whose context passes its compression threshold: two large files written, then read back. */
const filler = 'The harness keeps every message once in the store and compresses the middle of long contexts. '.repeat(260);
const compressScript = {
  steps: [
    { tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: `A ${filler}` } }] },
    { tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: `B ${filler}` } }] },
    { tool_calls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] },
    { tool_calls: [{ name: 'read_file', arguments: { path: 'b.txt' } }] },
    { content: 'Both files read. HARNESS_OK' },
  ],
  summaries: ['Goal: write a.txt and b.txt, then read them back. Both were written; a.txt was read.'],
};

// Step 3's model call fails twice (both attempts the turn allows): the turn fails, then is retried.
const retryScript = {
  steps: [
    { tool_calls: [{ name: 'write_file', arguments: { path: 'r.txt', content: 'retried\n' } }] },
    { tool_calls: [{ name: 'read_file', arguments: { path: 'r.txt' } }] },
    { fault: { status: 503, times: 2 }, content: 'Recovered. HARNESS_OK' },
  ],
};

/**
 * A long turn that crosses the thresholds of workflows/turn/replay-constants.ts under default limits
 * (a small event budget aside): quick local steps, then a slow call handed on after
 * AFTER_UNRECORDED_MS; calls whose model time passes SHOWN_WITHIN_MS; a fact working memory
 * refuses (MAX_MEMORY_CHARS); arguments past the repeat guard's canonical and key sizes; and the
 * same call four times: a warning, then the repeat guard stops the turn. It continues as new between steps.
 */
const big = (c: string) => c.repeat(20_000);
const longScript = {
  steps: [
    { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
    { tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'UTC' } }] },
    { fault: { delay_ms: 1_200 }, tool_calls: [{ name: 'remember', arguments: { key: 'a', value: big('a') } }] },
    { tool_calls: [{ name: 'remember', arguments: { key: 'b', value: big('b') } }] },
    { fault: { delay_ms: 400 }, tool_calls: [{ name: 'list_files', arguments: { path: '.' } }] },
    { fault: { delay_ms: 400 }, tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'Europe/Paris' } }] },
    { fault: { delay_ms: 400 }, tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'Asia/Tokyo' } }] },
    { tool_calls: [{ name: 'read_file', arguments: { path: 'none.txt', padding: 'p'.repeat(70 * 1024) } }] },
    { tool_calls: [{ name: 'list_files', arguments: {} }] },
    { tool_calls: [{ name: 'list_files', arguments: {} }] },
    { tool_calls: [{ name: 'list_files', arguments: {} }] },
    { tool_calls: [{ name: 'list_files', arguments: {} }] },
    { content: 'not reached: the repeat guard stops the turn' },
  ],
};

function mcpServers() {
  const everything = path.resolve(__dirname, '..', '..', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  return resolveMcpServers(
    {
      everything: { command: process.execPath, args: [everything, 'stdio'], tools: { 'trigger-elicitation-request': { decision: 'allow' } } },
      broken: { command: '/nonexistent/mcp-server' },
    },
    process.cwd(),
  );
}

async function main(): Promise<void> {
  const label = process.argv[2] ?? 'baseline';
  await withScratchHarness('record', async ({ client, taskQueue, address, declarations }) => {
    const sessionId = `history-${label}`;
    const config: SessionConfig = {
      model: { provider: 'scripted', model: 'scripted', script },
      systemPrompt: 'Reference session.',
      // A small event budget: turn 1 continues as new between steps, so runs of both kinds are recorded.
      limits: { ...DEFAULT_LIMITS, turnEventBudget: 40 },
      // What a user gets: the default rules written into the session (policy version 2).
      policy: freezePolicy(parsePolicy({ mode: 'ask' })),
    };
    const t1 = await sendMessage(client, { taskQueue, sessionId, config, text: 'Take notes.' });
    // write_file asks under the default policy: approve it as a person would.
    while ((await waitForTurn(client, t1.turnId)).kind === 'waiting') {
      await decideApprovals(client, sessionId, { approve: true });
    }
    const t2 = await sendMessage(client, { taskQueue, sessionId, text: 'Pick a colour.' });
    const waiting = await waitForTurn(client, t2.turnId);
    if (waiting.kind !== 'waiting') throw new Error('turn 2 should wait for an answer');
    await answerQuestion(client, sessionId, 'blue');
    await waitForTurn(client, t2.turnId);
    await endSession(client, sessionId);
    await client.workflow.getHandle(sessionId).result();

    const mcpSession = `${sessionId}-mcp`;
    // The worker declares the servers; the session names them, as one resolved from a config file does.
    declarations.add({ mcpServers: mcpServers() });
    const mcpConfig: SessionConfig = { ...config, model: { provider: 'scripted', model: 'scripted', script: mcpScript }, limits: DEFAULT_LIMITS, mcp: { servers: mcpServers().map(mcpServerRef) } };
    const m1 = await sendMessage(client, { taskQueue, sessionId: mcpSession, config: mcpConfig, text: 'Use the MCP tools.' });
    for (let out = await waitForTurn(client, m1.turnId); out.kind === 'waiting'; out = await waitForTurn(client, m1.turnId)) {
      if (out.state.pending?.kind === 'approvals') await decideApprovals(client, mcpSession, { approve: true });
      else await answerQuestion(client, mcpSession, JSON.stringify({ name: 'Ada', check: true }));
    }
    await endSession(client, mcpSession);
    await client.workflow.getHandle(mcpSession).result();

    const compressSession = `${sessionId}-compress`;
    const compressConfig: SessionConfig = {
      ...config,
      model: { provider: 'scripted', model: 'scripted', script: compressScript },
      limits: DEFAULT_LIMITS,
      compression: { ...DEFAULT_COMPRESSION, contextWindow: 12_000, outputReserve: 2_000, threshold: 0.5, keepTail: 2 },
    };
    const c1 = await sendMessage(client, { taskQueue, sessionId: compressSession, config: compressConfig, text: 'Write two files and read them.' });
    while ((await waitForTurn(client, c1.turnId)).kind === 'waiting') await decideApprovals(client, compressSession, { approve: true });
    const compressed = await client.workflow.getHandle(c1.turnId).result();
    if (!(compressed as { compressions?: unknown[] }).compressions?.length) throw new Error('the compression session did not compress');
    await endSession(client, compressSession);
    await client.workflow.getHandle(compressSession).result();

    const retrySession = `${sessionId}-retry`;
    const retryConfig: SessionConfig = { ...config, model: { provider: 'scripted', model: 'scripted', script: retryScript }, limits: { ...DEFAULT_LIMITS, modelMaxAttempts: 2, modelRetryWindowMs: 0 } };
    const r1 = await sendMessage(client, { taskQueue, sessionId: retrySession, config: retryConfig, text: 'Write, read, answer.' });
    while ((await waitForTurn(client, r1.turnId)).kind === 'waiting') await decideApprovals(client, retrySession, { approve: true });
    const plan = await planRetry(client, r1.turnId);
    await client.workflow.getHandle(retrySession).executeUpdate(retryTurnUpdate, { args: [{ turn: plan.turn, runId: plan.runId }] });
    await resetTurn(client, plan);
    const retried = await waitForTurn(client, r1.turnId);
    if (retried.kind !== 'done' || retried.result.terminated_by !== 'final_answer') throw new Error(`the retried turn did not finish: ${JSON.stringify(retried)}`);
    await waitForState(client, retrySession, (s) => s.status === 'idle', 30_000);

    const forkSession = `${sessionId}-fork`;
    // The fork goes on with its own script (its calls are numbered on from step 2: index 1).
    const forkModel = { provider: 'scripted' as const, model: 'scripted', script: { steps: [{ content: 'unused' }, { tool_calls: [{ name: 'read_file', arguments: { path: 'r.txt' } }] }, { content: 'Forked. HARNESS_OK' }] } };
    await startForked(client, taskQueue, await planFork(client, r1.turnId, 2, { message: 'Read it back, then answer.', model: forkModel }), forkSession);
    await waitForTurn(client, `${forkSession}/turn-1`);
    const rerunSession = `${sessionId}-rerun`;
    await startForked(client, taskQueue, await planRerun(client, r1.turnId), rerunSession);
    await waitForTurn(client, `${rerunSession}/turn-1`);
    await waitForState(client, rerunSession, (s) => s.rerun !== undefined, 30_000);
    // A rerun of the MCP session: its calls leave the sandbox, so they are answered from the record.
    const mcpRerun = `${mcpSession}-rerun`;
    await startForked(client, taskQueue, await planRerun(client, m1.turnId), mcpRerun);
    await waitForTurn(client, `${mcpRerun}/turn-1`);
    await waitForState(client, mcpRerun, (s) => s.rerun !== undefined, 30_000);
    for (const id of [retrySession, forkSession, rerunSession, mcpRerun]) {
      await endSession(client, id);
      await client.workflow.getHandle(id).result();
    }

    const longSession = `${sessionId}-long`;
    const longConfig: SessionConfig = { ...config, model: { provider: 'scripted', model: 'scripted', script: longScript }, limits: { ...DEFAULT_LIMITS, maxSteps: 40, turnEventBudget: 40 } };
    const l1 = await sendMessage(client, { taskQueue, sessionId: longSession, config: longConfig, text: 'A long turn.' });
    const long = await waitForTurn(client, l1.turnId);
    if (long.kind !== 'done' || long.result.terminated_by !== 'repeated_action') throw new Error(`the long turn did not end on the repeat guard: ${JSON.stringify(long).slice(0, 500)}`);
    await endSession(client, longSession);
    await client.workflow.getHandle(longSession).result();

    const ids = [sessionId, `${sessionId}/turn-1`, `${sessionId}/turn-2`, mcpSession, `${mcpSession}/turn-1`, compressSession, `${compressSession}/turn-1`];
    for (const s of [retrySession, forkSession, rerunSession, mcpRerun, longSession]) ids.push(s, `${s}/turn-1`);
    await writeHistories(client, address, label, ids);
  });
}

runScript(main);
