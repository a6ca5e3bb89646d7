/** What the eval workflow tests share: a scripted eval's session config and the local activities a workflow recorded. */
import type { Client } from '@temporalio/client';
import { DEFAULT_LIMITS, type SessionConfig } from '../../deterministic/session-config';
import { decodePayload } from '../../history/trace/events';
import { workflowRuns } from '../../history/workflow-runs';
import { DEFAULT_POLICY } from './harness';

/** The session config of an eval whose cases each bring their model_script, under the default policy. */
export function scriptedEvalConfig(systemPrompt: string): SessionConfig {
  return { model: { provider: 'scripted', model: 'scripted', script: { steps: [] } }, systemPrompt, limits: DEFAULT_LIMITS, policy: DEFAULT_POLICY };
}

/** The local activities a workflow's runs recorded (their markers), by type, in order. */
export async function localActivities(client: Client, workflowId: string): Promise<string[]> {
  const runs = await workflowRuns(client, workflowId);
  return runs.flatMap((r) =>
    (r.history.events ?? []).flatMap((e) => {
      const m = e.markerRecordedEventAttributes;
      if (m?.markerName !== 'core_local_activity') return [];
      return [(decodePayload(m.details?.data?.payloads?.[0]) as { activity_type?: string }).activity_type ?? ''];
    }),
  );
}
