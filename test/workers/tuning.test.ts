/**
 * workers/tuning.ts: the worker's tuning from the environment, its defaults, each variable
 * parsed into its Worker.create option, and bad values named one line each; and the drain's
 * description of what it waits for (workers/drain.ts).
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNING, DRAIN_CANCEL_MARGIN_MS, describeTuning, tuningOptions, tuningProblems, workerTuning } from '../../workers/tuning';
import { describeActivity, drainingLine } from '../../workers/drain';
import { createHarnessWorker, UsageError } from '../../index';

describe('workerTuning', () => {
  it('defaults: the SDK defaults for slots and cache (left unset), V8 context reuse, a 3 s sticky timeout and a 30 s drain grace', () => {
    const t = workerTuning({});
    expect(t.problems).toEqual([]);
    expect(t.tuning).toEqual(DEFAULT_TUNING);
    expect(t.tuning).toEqual({ reuseV8Context: true, stickyTimeoutMs: 3_000, drainGraceMs: 30_000 });
    // Unset slots and cache are not passed: the SDK computes its own (the cache from the heap limit).
    expect(t.options).toEqual({
      reuseV8Context: true,
      stickyQueueScheduleToStartTimeout: 3_000,
      shutdownGraceTime: 30_000,
      shutdownForceTime: 30_000 + DRAIN_CANCEL_MARGIN_MS,
    });
    expect(describeTuning(t.tuning)).toBe('');
    // Blank counts as unset.
    expect(workerTuning({ HARNESS_ACTIVITY_SLOTS: '  ', HARNESS_DRAIN_GRACE_SEC: '' }).tuning).toEqual(DEFAULT_TUNING);
  });

  it('parses each variable into its Worker.create option', () => {
    const t = workerTuning({
      HARNESS_WORKFLOW_SLOTS: '20',
      HARNESS_ACTIVITY_SLOTS: ' 50 ',
      HARNESS_LOCAL_ACTIVITY_SLOTS: '200',
      HARNESS_WORKFLOW_CACHE: '500',
      HARNESS_REUSE_V8_CONTEXT: 'false',
      HARNESS_STICKY_TIMEOUT_MS: '5000',
      HARNESS_DRAIN_GRACE_SEC: '45.5',
    });
    expect(t.problems).toEqual([]);
    expect(t.tuning).toEqual({ workflowSlots: 20, activitySlots: 50, localActivitySlots: 200, workflowCache: 500, reuseV8Context: false, stickyTimeoutMs: 5_000, drainGraceMs: 45_500 });
    expect(t.options).toEqual({
      maxConcurrentWorkflowTaskExecutions: 20,
      maxConcurrentActivityTaskExecutions: 50,
      maxConcurrentLocalActivityExecutions: 200,
      maxCachedWorkflows: 500,
      reuseV8Context: false,
      stickyQueueScheduleToStartTimeout: 5_000,
      shutdownGraceTime: 45_500,
      shutdownForceTime: 45_500 + DRAIN_CANCEL_MARGIN_MS,
    });
    expect(describeTuning(t.tuning)).toBe('workflow slots 20, activity slots 50, local activity slots 200, workflow cache 500, reuseV8Context false, sticky timeout 5000 ms, drain grace 45.5 s');
  });

  it.each([
    ['1', true],
    ['true', true],
    ['YES', true],
    ['on', true],
    ['0', false],
    ['False', false],
    ['no', false],
    ['off', false],
  ])('HARNESS_REUSE_V8_CONTEXT=%s is %s', (v, want) => {
    expect(workerTuning({ HARNESS_REUSE_V8_CONTEXT: v }).tuning.reuseV8Context).toBe(want);
  });

  it('a drain grace of 0 cancels calls in flight at once (the SDK default), still bounded by the margin', () => {
    const t = workerTuning({ HARNESS_DRAIN_GRACE_SEC: '0' });
    expect(t.problems).toEqual([]);
    expect(t.options).toMatchObject({ shutdownGraceTime: 0, shutdownForceTime: DRAIN_CANCEL_MARGIN_MS });
  });

  it('a cache of 0 (none) is accepted with any slots', () => {
    const t = workerTuning({ HARNESS_WORKFLOW_CACHE: '0', HARNESS_WORKFLOW_SLOTS: '100' });
    expect(t.problems).toEqual([]);
    expect(t.options).toMatchObject({ maxCachedWorkflows: 0, maxConcurrentWorkflowTaskExecutions: 100 });
  });

  it.each([
    ['HARNESS_WORKFLOW_SLOTS', 'ten', 'HARNESS_WORKFLOW_SLOTS is "ten": give a whole number from 2 to 10000'],
    ['HARNESS_WORKFLOW_SLOTS', '1', 'HARNESS_WORKFLOW_SLOTS is 1: give a whole number from 2 to 10000'],
    ['HARNESS_ACTIVITY_SLOTS', '0', 'HARNESS_ACTIVITY_SLOTS is 0: give a whole number from 1 to 10000'],
    ['HARNESS_ACTIVITY_SLOTS', '-5', 'HARNESS_ACTIVITY_SLOTS is "-5": give a whole number from 1 to 10000'],
    ['HARNESS_ACTIVITY_SLOTS', '2.5', 'HARNESS_ACTIVITY_SLOTS is "2.5": give a whole number'],
    ['HARNESS_LOCAL_ACTIVITY_SLOTS', '100000', 'HARNESS_LOCAL_ACTIVITY_SLOTS is 100000: give a whole number from 1 to 10000'],
    ['HARNESS_WORKFLOW_CACHE', '1', 'HARNESS_WORKFLOW_CACHE is 1: give a whole number: 0 (no cache) or from 2'],
    ['HARNESS_REUSE_V8_CONTEXT', 'maybe', 'HARNESS_REUSE_V8_CONTEXT is "maybe": give 1 or 0'],
    ['HARNESS_STICKY_TIMEOUT_MS', '3s', 'HARNESS_STICKY_TIMEOUT_MS is "3s": give milliseconds'],
    ['HARNESS_STICKY_TIMEOUT_MS', '50', 'HARNESS_STICKY_TIMEOUT_MS is 50: give milliseconds, a whole number from 100'],
    ['HARNESS_DRAIN_GRACE_SEC', '30s', 'HARNESS_DRAIN_GRACE_SEC is "30s": give seconds, a number from 0 to 3600'],
    ['HARNESS_DRAIN_GRACE_SEC', '-1', 'HARNESS_DRAIN_GRACE_SEC is "-1": give seconds'],
    ['HARNESS_DRAIN_GRACE_SEC', '30000', 'HARNESS_DRAIN_GRACE_SEC is "30000": give seconds, a number from 0 to 3600'],
  ])('%s=%s is one line naming the variable', (name, value, line) => {
    const t = workerTuning({ [name]: value });
    expect(t.problems).toHaveLength(1);
    expect(t.problems[0]).toContain(line);
    expect(t.problems[0]).not.toContain('\n');
    // The bad value does not reach the options: the default stands in for it.
    expect(t.tuning).toEqual(DEFAULT_TUNING);
  });

  it('names every bad variable, and slots above the cache by both names', () => {
    const t = workerTuning({ HARNESS_ACTIVITY_SLOTS: 'x', HARNESS_DRAIN_GRACE_SEC: 'y', HARNESS_WORKFLOW_SLOTS: '50', HARNESS_WORKFLOW_CACHE: '20' });
    expect(t.problems).toEqual([
      expect.stringMatching(/^HARNESS_ACTIVITY_SLOTS is "x"/),
      expect.stringMatching(/^HARNESS_DRAIN_GRACE_SEC is "y"/),
      'HARNESS_WORKFLOW_SLOTS (50) is more than HARNESS_WORKFLOW_CACHE (20): a workflow task runs a cached workflow, so give at most 20 slots or a larger cache',
    ]);
  });
});

describe('tuningProblems (settings given in code)', () => {
  it('names the setting the caller says, in its own unit', () => {
    const { problems, bad } = tuningProblems({ activitySlots: 0, drainGraceMs: -1, reuseV8Context: 'yes' as unknown as boolean }, (k) => `tuning.${k}`);
    expect(problems).toEqual([
      'tuning.activitySlots is 0: give a whole number from 1 to 10000 (the SDK\'s default is 100)',
      'tuning.reuseV8Context is "yes": give true or false',
      'tuning.drainGraceMs is -1: give milliseconds, a whole number from 0 to 3600000 (default 30000)',
    ]);
    expect(bad).toEqual(['activitySlots', 'reuseV8Context', 'drainGraceMs']);
    expect(tuningProblems({ ...DEFAULT_TUNING, activitySlots: 8, drainGraceMs: 5_000 }, String).problems).toEqual([]);
  });

  it('tuningOptions leaves out what is unset', () => {
    expect(Object.keys(tuningOptions({ ...DEFAULT_TUNING, activitySlots: 8 })).sort()).toEqual(
      ['maxConcurrentActivityTaskExecutions', 'reuseV8Context', 'shutdownForceTime', 'shutdownGraceTime', 'stickyQueueScheduleToStartTimeout'].sort(),
    );
  });
});

describe('createHarnessWorker({ tuning })', () => {
  it('refuses a bad setting in code or in its environment before connecting, naming it', async () => {
    // An address nothing listens on: a check after connecting would fail differently.
    const env = { TEMPORAL_ADDRESS: '127.0.0.1:1' };
    await expect(createHarnessWorker({ env, tuning: { activitySlots: 0 } })).rejects.toThrow(UsageError);
    await expect(createHarnessWorker({ env, tuning: { activitySlots: 0 } })).rejects.toThrow(/^tuning\.activitySlots is 0: give a whole number from 1 to 10000/);
    await expect(createHarnessWorker({ env: { ...env, HARNESS_WORKFLOW_CACHE: '20' }, tuning: { workflowSlots: 50 } })).rejects.toThrow(
      'tuning.workflowSlots (50) is more than HARNESS_WORKFLOW_CACHE (20)',
    );
    await expect(createHarnessWorker({ env: { ...env, HARNESS_REUSE_V8_CONTEXT: 'perhaps' } })).rejects.toThrow(/^HARNESS_REUSE_V8_CONTEXT is "perhaps"/);
  });
});

describe('the drain line', () => {
  const info = (activityType: string, isLocal = false) => ({ activityType, isLocal, workflowExecution: { workflowId: 's-1/turn-2', runId: 'r' } });

  it('names tools by their name and call, other activities by their type', () => {
    expect(describeActivity(info('executeTool'), [{ name: 'run_shell', callId: 't2-s1-c0' }])).toBe('run_shell (s-1/turn-2, call t2-s1-c0)');
    expect(describeActivity(info('executeTool', true), [{ name: 'write_file', callId: 't2-s1-c1' }])).toBe('write_file (s-1/turn-2, call t2-s1-c1, local)');
    expect(describeActivity(info('callModel'), [{ messages: [] }])).toBe('callModel (s-1/turn-2)');
  });

  it('says what it waits for and for how long', () => {
    expect(drainingLine({ graceMs: 30_000, taskQueue: 'harness' }, ['run_shell (s-1/turn-2, call t2-s1-c0)', 'callModel (s-2/turn-1)'])).toBe(
      'worker draining: stopped polling task queue harness; waiting up to 30 s for 2 activities in flight to finish: run_shell (s-1/turn-2, call t2-s1-c0); callModel (s-2/turn-1)',
    );
    expect(drainingLine({ graceMs: 30_000, taskQueue: 'harness' }, [])).toBe('worker draining: stopped polling task queue harness; no activity in flight');
  });
});
