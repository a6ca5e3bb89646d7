/**
 * claimHost: a session whose sandbox host was lost (deterministic/host.ts) is taken over by the worker
 * that runs this, on the shared queue: the workspace the turn began with is restored from the
 * message store into this host's workspace, so the session goes on from there. A worker without
 * a host of its own takes the session over unhosted (its calls then go to the shared queue).
 */
import { existsSync, readdirSync } from 'node:fs';
import type { ClaimHostInput, ClaimHostResult } from '../deterministic/activity-types';
import type { HostRef } from '../deterministic/host';
import type { MessageStore } from './store/message-store';
import { withStore } from './store/errors';
import { sessionWorkspace } from './tools/workspace';
import { restoreSnapshot } from './workspace-snapshot';

/** The host activities of a worker serving `host` (or none). */
export function createHostActivities(deps: { home: string; host?: HostRef; store: () => Promise<MessageStore> }) {
  return {
    async claimHost(input: ClaimHostInput): Promise<ClaimHostResult> {
      if (!deps.host) return {};
      const root = sessionWorkspace(deps.home, input.sessionId);
      // A retried claim finds the files it already restored: they are not written twice.
      const empty = !existsSync(root) || readdirSync(root).length === 0;
      if (!input.snapshot || !empty) return { host: deps.host, ...(input.snapshot ? { restored: { files: 0, problems: [] } } : {}) };
      const restored = await withStore(() => restoreSnapshot(root, input.sessionId, input.snapshot!, deps.store));
      return { host: deps.host, restored };
    },
  };
}
