/**
 * The worker's own listening ports, which http_request never reaches whatever a session
 * allows. "Own" means: every port the worker process or any process it started (the dev
 * server under `harness dev`, MCP stdio servers and what they start) listens on, found in
 * /proc on Linux; the ports of this HARNESS_HOME's embedded Temporal server, which the CLI
 * started (so it is not a descendant of a background worker); and the servers the worker
 * opens in-process, which register here (the scripted model, the embedded database) — the
 * registry is all there is where /proc is not. A process the user started elsewhere (the
 * app they develop on 127.0.0.1:3000) is not the worker's and can be allowed by host:port.
 */
import { embeddedFiles } from '../../machine/paths';
import { checkPidFile } from '../../machine/pids';
import { processTreeListeners, type ListenerSnapshot } from './proc-listeners';

/** What a port of this machine is when it is the worker's own ("scripted model server"), else undefined. */
export type OwnPortLookup = (port: number) => Promise<string | undefined>;

const registered = new Map<number, string>();

/** Records a port a server of this process listens on; returns the function that forgets it again. */
export function registerOwnPort(port: number, what: string): () => void {
  registered.set(port, what);
  return () => {
    if (registered.get(port) === what) registered.delete(port);
  };
}

/** The pid of this HARNESS_HOME's embedded Temporal server, when its pid file names a live one. */
function embeddedServerPids(home: string): number[] {
  const state = checkPidFile(embeddedFiles(home).serverPid, 'server', home);
  return state.state === 'ours' ? [state.pid] : [];
}

/** How old a /proc read may be before it is read again (each read costs a few milliseconds). */
const SNAPSHOT_TTL_MS = 1_000;

/**
 * The lookup the worker uses: registered ports first, then a /proc read of the worker's
 * process tree and (with `home`) its embedded server's. A read is reused for a second, except
 * for a port nothing listened on when it was taken: that port was opened since, so it is read
 * again rather than let through on stale data.
 */
export function ownPortLookup(opts: { home?: string; now?: () => number } = {}): OwnPortLookup {
  const now = opts.now ?? Date.now;
  let snapshot: (ListenerSnapshot & { at: number }) | undefined;
  const read = () => {
    const roots = [process.pid, ...(opts.home ? embeddedServerPids(opts.home) : [])];
    const found = processTreeListeners(roots);
    snapshot = found && { ...found, at: now() };
  };
  return (port) => {
    const named = registered.get(port);
    if (named) return Promise.resolve(named);
    if (!snapshot || now() - snapshot.at >= SNAPSHOT_TTL_MS || !snapshot.listening.has(port)) read();
    return Promise.resolve(snapshot?.own.get(port));
  };
}
