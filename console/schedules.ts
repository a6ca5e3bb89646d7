/**
 * The schedules the console lists: the harness's schedules of the task queues it lists (every
 * queue unless it names some), each as display text (escaped as every other value the page draws)
 * with its raw id apart in `ref`, and its next firing.
 */
import type { ScheduleInfo } from '../api/schedules';
import { consoleQueues, displayed, type ApiDeps } from './api';

export async function consoleSchedules(d: ApiDeps): Promise<unknown[]> {
  const queues = consoleQueues(d);
  const all: ScheduleInfo[] = await d.harness.schedules.list();
  return all
    .filter((s) => !queues.length || queues.includes(s.taskQueue))
    .map((s) => ({
      ...displayed({
        id: s.id,
        spec: s.spec,
        overlap: s.overlap,
        paused: s.paused,
        next_firing: s.nextFiring ?? null,
        target: 'sessionId' in s.target ? `session ${s.target.sessionId}` : `a new session${s.target.agent ? ` of agent ${s.target.agent}` : ''}`,
        text: s.text,
        task_queue: s.taskQueue,
        firings: s.recentFirings.length,
        last_firing: s.recentFirings.at(-1)?.at ?? null,
      }),
      ref: { id: s.id },
    }));
}
