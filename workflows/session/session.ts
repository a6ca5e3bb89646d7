/** sessionWorkflow: a long-lived conversation; each user message runs as a child turnWorkflow. */
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  deprecatePatch,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { SessionInput, TurnResult } from '../../deterministic/session';
import { forkResume, type ForkStart } from './fork';
import { failureType, NOT_DECLARED, rootCauseMessage } from '../../deterministic/errors';
import { mcpScopeOf } from '../../deterministic/mcp-scope';
import {
  endSessionUpdate,
  refreshMcpToolsUpdate,
  retryTurnUpdate,
  sendMessageUpdate,
  stateQuery,
  turnStatusSignal,
  MAX_MESSAGE_BYTES,
  utf8Length,
  type RetryTurnInput,
} from '../../deterministic/messages';
import { SessionTracker } from './tracker';
import { SessionBackground, type QueuedMessage } from './background';
import { checkWhileRunning, steerRunningTurn } from './steer';
import { settleConfig } from './settle';
import { turnWorkflow } from '../turn/turn';
import { TOOLS_BY_REF } from '../turn/mcp';
import { discoverActivity, STORE_ACTIVITY } from '../activity-options';
import { purgeAtEnd, type PurgeAtEnd } from './purge';
import type { createActivities } from '../../activities';
import { closeSandbox } from '../sandbox-host';

// The session's store reads and writes ride out a store outage by time, not by three attempts.
const { prepareFork, compareRerun } = proxyActivities<ReturnType<typeof createActivities>>(STORE_ACTIVITY);
// A failed turn's spend is read from its history: a few seconds, a few tries (then it counts as nothing, as before).
const { failedTurnSpend } = proxyActivities<ReturnType<typeof createActivities>>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1s', maximumAttempts: 3 } });
// Waits for a retried turn's reset run, which may wait on humans for days: alive by heartbeat,
// short, so that a worker lost meanwhile is replaced within seconds, not a minute (the heartbeat
// timeout is not part of replay: no patch).
const { awaitTurnRun } = proxyActivities<ReturnType<typeof createActivities>>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1s', maximumAttempts: 20 },
});

/** Runs a session until it is ended; continues as new between turns when history grows. */
export async function sessionWorkflow(input: SessionInput): Promise<{ sessionId: string; turns: number } & PurgeAtEnd> {
  const tracker = new SessionTracker(input);
  const queue: QueuedMessage[] = [];
  let ended = false;
  // Background sub-agents report here; their ends are messages (background.ts).
  const background = new SessionBackground(input.carry?.background, tracker, queue, () => ended);
  // `end --purge`: delete what the session stored once it has ended; `closing` is the point
  // after which a late request to purge is refused rather than silently dropped.
  let purgeOnEnd = false;
  let closing = false;
  // A refresh of the MCP tools is running (declared before the validators that read it: an
  // update delivered with the session's first task is validated as its handler is set).
  let refreshing = false;

  setHandler(stateQuery, () => background.view(tracker.view()));
  setHandler(turnStatusSignal, (s) => tracker.onTurnStatus(s));
  setHandler(
    sendMessageUpdate,
    async (msg) => {
      // While a turn runs (or one is about to start) the message goes to it (steer.ts).
      const steered = (tracker.busy || queue.length > 0) && (await steerRunningTurn(tracker, queue, msg));
      if (steered) return steered;
      const turn = tracker.turnCount + queue.length + 1;
      queue.push(msg);
      // Reply once the child exists so the caller can wait on it by id right away.
      await condition(() => tracker.startedTurns >= turn);
      return { turn, turnId: tracker.turnId(turn) };
    },
    {
      validator: (msg) => {
        if (ended) throw new Error('the session has ended');
        if (typeof msg?.text !== 'string' || msg.text.trim() === '') throw new Error('the message must be non-empty text');
        // Checked here too, not only by the CLI: any client may send, and an oversized message
        // would make every later turn input and model call of the session too large.
        const bytes = utf8Length(msg.text);
        if (bytes > MAX_MESSAGE_BYTES) {
          throw new Error(`the message is ${bytes} bytes; at most ${MAX_MESSAGE_BYTES / 1024} KiB of UTF-8 text is accepted`);
        }
        if (msg.maxSteps !== undefined && !(Number.isInteger(msg.maxSteps) && msg.maxSteps > 0)) {
          throw new Error('maxSteps must be a positive integer');
        }
        checkWhileRunning(msg, tracker.busy || queue.length > 0, tracker.currentTurnId);
      },
    },
  );
  // `harness retry`: the failed last turn is taken back before the CLI resets it (so no status
  // of the reset run is lost), then the session waits for that run and adopts its result.
  let retry: RetryTurnInput | undefined;
  setHandler(
    retryTurnUpdate,
    (req) => {
      retry = { turn: req.turn, runId: req.runId };
      return { accepted: true as const, turnId: tracker.turnId(req.turn) };
    },
    {
      validator: (req) => {
        if (ended) throw new Error('the session has ended; fork the turn into a new session instead');
        if (tracker.busy || queue.length > 0 || refreshing || retry) throw new Error('the session is busy (a turn or a retry is running); try again when it is idle');
        if (typeof req?.runId !== 'string' || req.runId === '') throw new Error('runId must name the run being reset');
        const why = tracker.whyNoRetry(req.turn);
        if (why) throw new Error(why);
      },
    },
  );
  setHandler(
    endSessionUpdate,
    (req) => {
      ended = true;
      if (req?.purge === true) purgeOnEnd = true;
      return { ended: true as const };
    },
    {
      validator: (req) => {
        if (req?.purge !== undefined && typeof req.purge !== 'boolean') throw new Error('purge must be true or false');
        // An ended session still finishing its turn may yet be asked to purge at its end.
        if (ended && !(req?.purge === true && !purgeOnEnd && !closing)) throw new Error('the session has already ended');
      },
    },
  );

  await settleConfig(input.sessionId, tracker);

  // The session's MCP tools are listed once, here (each server bounded by its startup timeout):
  // the tool set is then in history, so replay and every turn see the same tools. Again only when
  // a server says its list changed (in a turn) or the user asks (`harness mcp --refresh`).
  const servers = tracker.config.mcp?.servers ?? [];
  const discover = async () => {
    try {
      // A refresh names the set the session has by reference; the same tools come back as
      // `unchanged`, not again in full (activities/mcp/tool-set.ts).
      const had = tracker.mcpTools;
      const previousRef = had ? { previousRef: { servers: had.servers, ...(had.ref ? { ref: had.ref } : {}) } } : {};
      // The set comes back by reference (its list in the store): the carry, each turn's input and
      // each continue-as-new name it instead of holding every schema (deterministic/mcp-tool-ref.ts).
      const byRef = patched(TOOLS_BY_REF) ? { byRef: true as const } : {};
      const { unchanged, ...found } = await discoverActivity(servers)({ sessionId: input.sessionId, ...mcpScopeOf(tracker.config), servers, ...previousRef, ...byRef });
      tracker.useMcpTools(unchanged && had ? { ...had, servers: found.servers } : found);
    } catch (err) {
      // A server the worker did not declare: the session is refused before any server starts.
      if (failureType(err) === NOT_DECLARED) throw ApplicationFailure.nonRetryable(rootCauseMessage(err), NOT_DECLARED);
      // Discovery itself failed (no worker answered in time, the store is down): the session
      // goes on with the built-in tools; the servers' tools answer MCP_SERVER_UNAVAILABLE.
      const why = `tool discovery failed: ${rootCauseMessage(err)}`;
      tracker.useMcpTools({ servers: servers.map((s) => ({ server: s.name, status: 'failed', error: why, tools: 0 })), tools: [] });
    }
  };
  setHandler(
    refreshMcpToolsUpdate,
    async () => {
      refreshing = true;
      try {
        await discover();
      } finally {
        refreshing = false;
      }
      return { servers: tracker.mcpTools?.servers ?? [] };
    },
    {
      validator: () => {
        if (!servers.length) throw new Error('this session has no MCP servers');
        if (ended) throw new Error('the session has ended');
        if (tracker.busy || queue.length > 0 || refreshing) throw new Error('a turn or a refresh is running; try again when the session is idle');
      },
    },
  );
  if (servers.length && !tracker.mcpTools) {
    deprecatePatch('mcp-tools');
    await discover();
  }

  // `harness fork`: the first turn goes on with the recorded one from its step; the steps before
  // it are the copied conversation, not model calls.
  let fork: ForkStart | undefined;
  if (input.fork && !input.carry) {
    const prepared = await prepareFork({ sessionId: input.sessionId, fork: input.fork });
    tracker.forked(input.fork, prepared);
    // A rerun's model answers with the recorded replies.
    if (prepared.script) tracker.useConfig({ ...tracker.config, model: { provider: 'scripted', model: 'replay', script: prepared.script } });
    fork = forkResume(input.fork, prepared);
    queue.push({ text: fork.userMessage });
  }

  // What a turn that returned no result spent, from its history (runs from before: nothing).
  const spentBy = async (turnId: string) => {
    if (!patched('failed-turn-spend')) return undefined;
    try {
      return await failedTurnSpend({ turnId });
    } catch {
      return undefined;
    }
  };

  try {
    for (;;) {
      await condition(() => (queue.length > 0 && !refreshing) || ended || retry !== undefined);
      if (retry) {
        const { turn, runId } = retry;
        tracker.retrying(turn);
        const out = await awaitTurnRun({ workflowId: tracker.turnId(turn), afterRunId: runId });
        if (out.result) tracker.retried(out.result);
        else tracker.retryEnded(out.problem ?? 'no result');
        retry = undefined;
        continue;
      }
      const msg = queue.shift();
      if (!msg) break;
      const turn = tracker.turnCount + 1;
      const turnInput = background.turnInput(tracker.turnInput(turn, msg), msg);
      const child = await startChild(turnWorkflow, {
        workflowId: tracker.turnId(turn),
        args: [fork ? { ...turnInput, ...fork.turn } : turnInput],
      });
      fork = undefined;
      tracker.started(turn, child.workflowId);
      let done: TurnResult | undefined;
      try {
        done = await child.result();
        tracker.finished(done);
      } catch (err) {
        // A turn that itself failed (not a tool or model error, which it reports) must not
        // take the session down: record it, with what it spent, and stay ready for the next message.
        tracker.finished(tracker.failedTurn(turn, msg, err, isCancellation(err), await spentBy(tracker.turnId(turn))));
      }
      // A rerun's first turn is compared with its record once it is done.
      const replay = turn === 1 ? input.fork?.replay : undefined;
      if (replay && done?.conversation) {
        try {
          tracker.rerunCompared(
            await compareRerun({
              recorded: { sessionId: input.fork!.from.sessionId, conversation: replay.conversation },
              rerun: { sessionId: input.sessionId, conversation: done.conversation },
              from: tracker.forkPoint,
            }),
          );
        } catch (err) {
          tracker.rerunCompared({ compared: 0, diverged: false, note: `the comparison with the record failed: ${rootCauseMessage(err)}` });
        }
      }

      if (queue.length === 0 && !ended && tracker.shouldContinueAsNew(workflowInfo())) {
        // Let in-flight handlers (a refresh of the MCP tools) finish first. A message that arrives
        // meanwhile runs before we continue as new; an end or a retry accepted meanwhile is done in
        // this run (the next one would not know of it: an end was dropped so).
        const heed = patched('end-or-retry-before-continue-as-new');
        const stay = () => heed && (ended || retry !== undefined);
        await condition(() => allHandlersFinished() || queue.length > 0 || stay());
        if (queue.length === 0 && !stay()) {
          const { background: _b, ...carry } = tracker.carry();
          const children = background.carry();
          await continueAsNew<typeof sessionWorkflow>({ ...input, config: tracker.config, carry: { ...carry, ...(children ? { background: children } : {}) } });
        }
      }
    }
    tracker.end();
    await background.cancelAll();
    deprecatePatch('close-sandbox-on-end');
    await closeSandbox(input.sessionId, tracker.carry().host, tracker.config.limits.hostTimeoutMs);
    closing = true;
    let purge: PurgeAtEnd = {};
    if (purgeOnEnd) {
      deprecatePatch('purge-on-end');
      purge = await purgeAtEnd(input.sessionId, tracker.carry().host);
    }
    await condition(allHandlersFinished);
    return { sessionId: input.sessionId, turns: tracker.turnCount, ...purge };
  } catch (err) {
    // A cancelled session frees its sandbox too, in a scope the cancellation cannot stop
    // (continue-as-new is not a cancellation: the next run keeps the sandbox).
    if (isCancellation(err)) await background.cancelAll();
    if (isCancellation(err) && patched('close-sandbox-on-cancel')) {
      await CancellationScope.nonCancellable(() => closeSandbox(input.sessionId, tracker.carry().host, tracker.config.limits.hostTimeoutMs));
    }
    throw err;
  }
}
