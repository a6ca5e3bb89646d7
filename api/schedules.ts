/**
 * Schedules: a message sent to an agent at set times, on Temporal Schedules. Each firing starts
 * a new session with the message as its first turn, or sends it to an existing session, as
 * `send()` would; the firing waits for that turn, so the overlap policy is about turns. Reached as
 * `harness.schedules` of a HarnessClient; `harness schedule …` is built on it.
 */
import type { Client, ScheduleDescription, ScheduleSummary } from '@temporalio/client';
import { ScheduleAlreadyRunning, ScheduleNotFoundError } from '@temporalio/client';
import { UsageError, UserError } from '../machine/errors';
import { firingSpec, OVERLAP, parseOverlap, type FiringTimes, type OverlapName } from '../client/schedule-spec';
import { checkMessage, sessionExists } from '../client/session-client';
import { firingWorkflowId, SCHEDULE_ID, SCHEDULE_MEMO, type ScheduledMessage } from '../deterministic/schedule';
import type { SessionConfig } from '../deterministic/session-config';
import { newSessionConfig, type SendOptions } from './send-options';

export type { FiringTimes, OverlapName } from '../client/schedule-spec';

/** A schedule to make: when (`cron` or `every`), what to say, and to whom. */
export interface ScheduleOptions
  extends FiringTimes,
    Pick<SendOptions, 'agent' | 'model' | 'policy' | 'configFile' | 'systemPrompt' | 'metadata' | 'maxSteps'> {
  /** The message each firing sends (at most 256 KiB of UTF-8). */
  text: string;
  /** The schedule's id (default `sched-` and random letters): letters, digits, `.`, `_`, `-`, at most 64. */
  id?: string;
  /** Send to this existing session each time (default: each firing starts a new session). */
  sessionId?: string;
  /**
   * A firing while the previous firing's turn has not ended: `skip` it (default), `buffer` one to
   * run when that turn ends, or `allow` it to start anyway.
   */
  overlap?: OverlapName;
  /** Make it paused (resume() starts it). */
  paused?: boolean;
  /** @internal The new sessions' configuration, already resolved (the CLI resolves it before connecting). */
  config?: SessionConfig;
}

/** A schedule as listings show it. */
export interface ScheduleInfo {
  id: string;
  /** `cron 0 9 * * 1-5 Europe/Berlin`, `every 10m`. */
  spec: string;
  overlap: OverlapName;
  paused: boolean;
  /** The next firing (ISO 8601); none when paused. */
  nextFiring?: string;
  /** Whom it sends to: an existing session, or a new session each time (as `agent` when one is named). */
  target: { sessionId: string } | { newSession: true; agent?: string };
  /** The start of the message. */
  text: string;
  taskQueue: string;
  /** The firings so far that Temporal still lists (newest last): when, and the firing's workflow. */
  recentFirings: { at: string; workflowId: string }[];
}

/** What the schedule's memo holds: the harness's mark, and what a listing shows without reading the action. */
interface ScheduleMark {
  spec: string;
  overlap: OverlapName;
  target: ScheduleInfo['target'];
  text: string;
  taskQueue: string;
}

const TEXT_PREVIEW = 200;
const NOT_FOUND_HINT = 'list schedules with `harness schedule list`';

/** The schedules of a harness client: create, list, describe, pause, resume, trigger, delete. */
export class HarnessSchedules {
  constructor(
    private readonly temporal: Client,
    private readonly opts: { taskQueue?: string; env?: NodeJS.ProcessEnv; cwd?: string; onNote?: (line: string) => void } = {},
  ) {}

  /** Makes a schedule; mistakes (times, time zone, overlap, message, target) are refused before anything is made. */
  async create(o: ScheduleOptions): Promise<ScheduleInfo> {
    const id = o.id ?? `sched-${Math.random().toString(36).slice(2, 10)}`;
    if (!SCHEDULE_ID.test(id)) throw new UsageError(`invalid schedule id ${JSON.stringify(id)}`, 'use letters, digits, ".", "_" or "-" (at most 64, starting with a letter or digit)');
    const { spec, text: specText } = firingSpec(o);
    const overlap = o.overlap === undefined ? 'skip' : parseOverlap(o.overlap);
    checkMessage(o.text, 'the message', "say what the agent should do at each firing");
    if (o.maxSteps !== undefined && !(Number.isInteger(o.maxSteps) && o.maxSteps > 0)) throw new UsageError('maxSteps must be a positive whole number');
    const taskQueue = this.opts.taskQueue;
    if (!taskQueue) throw new UsageError('this client was made without a task queue and cannot make schedules');
    const message: ScheduledMessage = { scheduleId: id, text: o.text, ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}) };
    let target: ScheduleInfo['target'];
    if (o.sessionId !== undefined) {
      const shaping = [o.agent, o.model, o.policy, o.configFile, o.systemPrompt, o.metadata, o.config].some((v) => v !== undefined);
      if (shaping) throw new UsageError(`session ${o.sessionId} keeps the settings it started with`, 'drop the agent, model, policy and config options to send to it, or leave out the session to start new ones');
      if (!(await sessionExists(this.temporal, o.sessionId))) throw new UserError(`no session named ${o.sessionId}`, 'list sessions with `harness sessions`');
      message.sessionId = o.sessionId;
      target = { sessionId: o.sessionId };
    } else {
      // Resolved as for a new session of send(): the same configuration a `run` would start with.
      const config = o.config ?? (await newSessionConfig(this.temporal, '', withoutSession(o), this.opts));
      const withMeta = config && o.metadata !== undefined ? { ...config, metadata: o.metadata } : config;
      if (!withMeta) throw new UsageError('no configuration for the new sessions');
      message.config = withMeta;
      const agent = typeof o.agent === 'string' ? o.agent : o.agent?.name;
      target = { newSession: true, ...(agent ? { agent } : {}) };
    }
    const mark: ScheduleMark = { spec: specText, overlap, target, text: preview(o.text), taskQueue };
    try {
      await this.temporal.schedule.create({
        scheduleId: id,
        spec,
        action: { type: 'startWorkflow', workflowType: 'scheduledMessageWorkflow', workflowId: firingWorkflowId(id), taskQueue, args: [message] },
        policies: { overlap: OVERLAP[overlap], catchupWindow: '1 minute' },
        memo: { [SCHEDULE_MEMO]: mark },
        state: { paused: Boolean(o.paused), note: o.paused ? 'made paused' : 'made by the harness' },
      });
    } catch (err) {
      if (err instanceof ScheduleAlreadyRunning) throw new UsageError(`a schedule named ${id} exists`, 'pick another id, or delete that one first (`harness schedule delete`)');
      if (/invalid|INVALID_ARGUMENT/i.test((err as Error)?.message ?? '')) throw new UsageError(`Temporal refused the schedule: ${(err as Error).message}`, 'check the cron expression and the time zone');
      throw err;
    }
    return this.describe(id);
  }

  /** The harness's schedules (those it made), by id; of every task queue unless given one. */
  async list(opts: { taskQueue?: string } = {}): Promise<ScheduleInfo[]> {
    const out: ScheduleInfo[] = [];
    for await (const s of this.temporal.schedule.list()) {
      const info = infoOf(s);
      if (info && (!opts.taskQueue || info.taskQueue === opts.taskQueue)) out.push(info);
    }
    return out.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** One schedule, read from Temporal (not from the list, which may lag behind a change). */
  async describe(id: string): Promise<ScheduleInfo> {
    return infoOf(await this.described(id))!;
  }

  /** Pauses a schedule: it fires no more until resumed. */
  async pause(id: string, note = 'paused by the harness'): Promise<void> {
    await this.described(id);
    await this.temporal.schedule.getHandle(id).pause(note);
  }

  /** Resumes a paused schedule. */
  async resume(id: string): Promise<void> {
    await this.described(id);
    await this.temporal.schedule.getHandle(id).unpause('resumed by the harness');
  }

  /** Fires a schedule now, once, whatever its overlap policy (paused or not). */
  async trigger(id: string): Promise<void> {
    await this.described(id);
    await this.temporal.schedule.getHandle(id).trigger(OVERLAP.allow);
  }

  /** Deletes a schedule; firings already started go on. */
  async delete(id: string): Promise<void> {
    await this.described(id);
    await this.temporal.schedule.getHandle(id).delete();
  }

  /** The schedule's description; a schedule the harness did not make is as good as none. */
  private async described(id: string): Promise<ScheduleDescription> {
    if (!SCHEDULE_ID.test(id)) throw new UsageError(`invalid schedule id ${JSON.stringify(id)}`, NOT_FOUND_HINT);
    try {
      const d = await this.temporal.schedule.getHandle(id).describe();
      if (markOf(d.memo)) return d;
    } catch (err) {
      if (!(err instanceof ScheduleNotFoundError)) throw err;
    }
    throw new UserError(`no schedule named ${id}`, NOT_FOUND_HINT);
  }
}

function markOf(memo: Record<string, unknown> | undefined): ScheduleMark | undefined {
  const m = memo?.[SCHEDULE_MEMO] as ScheduleMark | undefined;
  return m && typeof m === 'object' && typeof m.spec === 'string' ? m : undefined;
}

function infoOf(s: ScheduleSummary | ScheduleDescription): ScheduleInfo | undefined {
  const mark = markOf(s.memo);
  if (!mark) return undefined;
  const next = s.state.paused ? undefined : s.info.nextActionTimes[0];
  return {
    id: s.scheduleId,
    spec: mark.spec,
    overlap: mark.overlap,
    paused: s.state.paused,
    ...(next ? { nextFiring: next.toISOString() } : {}),
    target: mark.target,
    text: mark.text,
    taskQueue: mark.taskQueue,
    recentFirings: s.info.recentActions.map((a) => ({ at: a.takenAt.toISOString(), workflowId: a.action.workflow.workflowId })),
  };
}

/** The options a new session's configuration is resolved from. */
function withoutSession(o: ScheduleOptions): SendOptions {
  const { sessionId: _s, text: _t, id: _i, cron: _c, every: _e, timezone: _z, overlap: _o, paused: _p, config: _f, ...rest } = o;
  return rest;
}

function preview(text: string): string {
  return text.length > TEXT_PREVIEW ? `${text.slice(0, TEXT_PREVIEW)}…` : text;
}
