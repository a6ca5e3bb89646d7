/**
 * A replay divergence in the harness's words: what the history holds at the event where the
 * code went another way (the model call of step 2, a tool call …), and what the code did
 * instead, read from the SDK's nondeterminism message.
 */
import { decodePayload, localModelCall, modelStepOf } from '../trace/events';
import { parseAgentTurnId, parseTurnId } from '../../deterministic/turn-id';
import type { History } from '@temporalio/common/lib/proto-utils';

type HistoryEvent = NonNullable<History['events']>[number];

/** What the history holds at an event: its type (`ActivityTaskScheduled`) and a phrase. */
interface EventWords {
  type: string;
  words: string;
}

/** The SDK's own account of the divergence (the text after "Nondeterminism error:"). */
export function sdkDetail(message: string): string {
  const m = /Nondeterminism error: ([\s\S]*?)(?:", source:|$)/.exec(message);
  return (m ? m[1]! : message).trim();
}

/** An activity in words, with its step and tool when its input names them. */
function activityWords(type: string, input?: { step?: unknown; name?: unknown }, step?: number): string {
  const s = typeof input?.step === 'number' ? input.step : step;
  const ofStep = s !== undefined ? ` of step ${s}` : '';
  switch (type) {
    case 'callModel':
      return `the model call${ofStep}`;
    case 'executeTool':
      return `a tool call${typeof input?.name === 'string' ? ` (${input.name})` : ''}${ofStep}`;
    case 'compressContext':
      return `the context compression${ofStep}`;
    case 'prepareTurn':
      return 'preparing the turn (skills, memories)';
    case 'storeValue':
      return 'storing a value in the message store';
    case 'discoverMcpTools':
      return 'listing the MCP servers’ tools';
    case 'closeSession':
      return 'closing the session’s sandbox';
    case 'checkpoint':
      return 'a checkpoint (the end of a workflow task, recording the local calls before it)';
    default:
      return `activity ${type}`;
  }
}

/** Describes the event with this id (falling back to its type when it is not one the harness names). */
export function describeEvent(events: readonly HistoryEvent[], eventId: number): EventWords {
  const index = events.findIndex((e) => Number(e.eventId) === eventId);
  const e = events[index];
  if (!e) return { type: 'unknown', words: `event ${eventId}, past the end of the history` };
  const type = eventType(e);
  // A local activity's marker has no input: its step is that of the model call before it.
  const step = lastModelStep(events.slice(0, index));
  const scheduled = (id: unknown) => events.find((x) => Number(x.eventId) === Number(id))?.activityTaskScheduledEventAttributes;
  const activity = (a: ReturnType<typeof scheduled>) => activityWords(a?.activityType?.name ?? '?', decodePayload(a?.input?.payloads?.[0]) as never);

  if (e.activityTaskScheduledEventAttributes) return { type, words: activity(e.activityTaskScheduledEventAttributes) };
  const done = e.activityTaskStartedEventAttributes ?? e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
  if (done) return { type, words: `${DONE_WORDS[type] ?? type} ${activity(scheduled(done.scheduledEventId))}` };
  const marker = e.markerRecordedEventAttributes;
  if (marker?.markerName === 'core_local_activity') {
    const data = decodePayload(marker.details?.data?.payloads?.[0]) as { activity_type?: string } | undefined;
    // A model call's marker repeats its request, which names its step.
    const model = localModelCall(e)?.input as { step?: unknown } | undefined;
    return { type, words: `${activityWords(data?.activity_type ?? '?', model, step)}, run as a local activity` };
  }
  if (marker?.markerName === 'core_patch') {
    const data = decodePayload(marker.details?.['patch-data']?.payloads?.[0]) as { id?: string } | undefined;
    return { type, words: `the patched('${data?.id ?? '?'}') marker` };
  }
  const child = e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
  if (child) return { type, words: `starting ${turnWords(child)}` };
  const signalled = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
  if (signalled) return { type, words: `a signal (${signalled.signalName}) to ${turnWords(signalled.workflowExecution?.workflowId ?? '?')}` };
  if (e.timerStartedEventAttributes) return { type, words: 'a timer (a wait with a timeout)' };
  if (e.workflowExecutionCompletedEventAttributes) return { type, words: 'the end of the workflow' };
  if (e.workflowExecutionContinuedAsNewEventAttributes) return { type, words: 'the continue-as-new to a next run' };
  return { type, words: `a ${type} event` };
}

/** What the code did instead, from the SDK's message. */
export function codeWords(message: string): string {
  const detail = sdkDetail(message);
  let m = /scheduled event '(\w+)' does not match activity type of (local )?activity command '(\w+)'/.exec(detail);
  if (m) return `${m[2] ? 'ran' : 'scheduled'} ${activityWords(m[3]!)}${m[2] ? ' as a local activity' : ''} there`;
  m = /Missing associated machine for LocalActivity/.exec(detail);
  if (m) return 'did not run that local activity (it did something else first, or nothing)';
  // Core names no command here: the code ran a local activity there (which matches no event
  // until its marker), or ran out of steps before the history did.
  if (/No command scheduled for event/.test(detail)) return 'scheduled nothing there (it ran a local activity, such as a quick model call, or it has fewer steps than the history)';
  m = /^([\w ]+?) machine does not handle this event/.exec(detail);
  if (m) return `${MACHINE_WORDS[m[1]!.toLowerCase()] ?? `issued a ${m[1]} command`} there`;
  if (/child workflow (id|type) of command/.test(detail)) return 'started a different child workflow there';
  if (/activity id of (local )?activity command/.test(detail)) return 'scheduled a different activity there';
  return 'went another way (see the SDK’s detail)';
}

const DONE_WORDS: Record<string, string> = {
  ActivityTaskStarted: 'the start of',
  ActivityTaskCompleted: 'the result of',
  ActivityTaskFailed: 'the failure of',
  ActivityTaskTimedOut: 'the timeout of',
};

const MACHINE_WORDS: Record<string, string> = {
  activity: 'scheduled an activity (a model or tool call)',
  timer: 'started a timer',
  'child workflow': 'started a child workflow (a turn)',
  'signal external wf': 'signalled another workflow',
  'cancel external wf': 'cancelled another workflow',
  'complete workflow': 'ended the workflow',
  'fail workflow': 'failed the workflow',
  'cancel workflow': 'cancelled the workflow',
  'continue as new workflow': 'continued as new',
  update: 'handled an update',
};

/** `<session>/turn-3` → `turn 3 (<session>/turn-3)`; a sub-agent's → `sub-agent turn (<id>)`; anything else → `workflow <id>`. */
export function turnWords(workflowId: string): string {
  const t = parseTurnId(workflowId);
  if (t) return `turn ${t.turn} (${workflowId})`;
  return parseAgentTurnId(workflowId) ? `sub-agent turn (${workflowId})` : `workflow ${workflowId}`;
}

/** `ActivityTaskScheduled` from the attributes an event carries. */
function eventType(e: HistoryEvent): string {
  const key = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k]);
  return key ? key[0]!.toUpperCase() + key.slice(1, -'EventAttributes'.length) : `EventType ${String(e.eventType)}`;
}

function lastModelStep(events: readonly HistoryEvent[]): number | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const step = modelStepOf(events[i]!);
    if (step !== undefined) return step;
  }
  return undefined;
}
