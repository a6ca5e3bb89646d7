/**
 * A turn followed live with the sub-agent turns it starts: each child turn (`<turnId>/agent-<callId>`)
 * gets a follower of its own as soon as the parent's history says it started, and its spans are
 * nested under the call that started it, as `harness trace` nests them (sub-agent-spans.ts). While
 * the parent waits on a child, the news is the child's: the tree waits on every open follower and
 * wakes on the first that has new events, so the console and the live lines show a sub-agent's
 * steps as it takes them, not only when it ends.
 */
import type { Client } from '@temporalio/client';
import { HistoryFollower, type FollowStep } from './follow';
import { addSubAgentSpans } from '../../history/trace/sub-agent-spans';
import type { BuiltSpan } from '../../history/trace/types';
import type { Run } from '../../history/trace/runs';
import { parseSubAgentTurnId } from '../../deterministic/turn-id';
import type { Trouble } from '../wait-progress';

export class TurnTree {
  readonly follower: HistoryFollower;
  private readonly children = new Map<string, TurnTree>();
  /** Children whose history Temporal did not have yet when the parent named them. */
  private readonly unloaded = new Set<string>();
  private polling?: Promise<FollowStep>;
  /** The spans of this turn itself, as the last spans() built them. */
  private last: BuiltSpan[] = [];

  constructor(
    private readonly client: Client,
    readonly turnId: string,
    private readonly build: (turnId: string, runs: readonly Run[]) => BuiltSpan[],
    private readonly onTrouble?: (t: Trouble | undefined) => void,
  ) {
    this.follower = new HistoryFollower(client, turnId, onTrouble);
  }

  /** Loads the turn's runs so far and its children's; false when Temporal does not know the turn. */
  async load(signal?: AbortSignal): Promise<boolean> {
    if (!(await this.follower.load(signal))) return false;
    await this.discover(signal);
    return true;
  }

  /** The turn's spans with its children's under the calls that started them. */
  async spans(): Promise<BuiltSpan[]> {
    const runs = this.follower.current();
    const spans = this.build(this.turnId, runs);
    this.last = [...spans];
    const known = (id: string) => this.children.get(id);
    await addSubAgentSpans(spans, this.turnId, runs, async (id) => known(id)?.follower.current() ?? [], async (id) => (await known(id)?.spans()) ?? [], []);
    return spans;
  }

  /** The sub-agent a span is of, by span id (absent: the turn's own), as the last spans() built them. */
  agents(): Map<string, string> {
    const out = new Map<string, string>();
    for (const child of this.children.values()) {
      const agent = child.agent();
      for (const [id, a] of child.agents()) out.set(id, a);
      for (const b of child.last) if (!out.has(b.span.span_id) && agent) out.set(b.span.span_id, agent);
    }
    return out;
  }

  /** The agent the turn runs as (its input's), when its history holds its start. */
  private agent(): string | undefined {
    const started = this.follower.current()[0]?.events.find((e) => e.kind === 'started');
    const input = (started && 'input' in started ? started.input : undefined) as { config?: { agent?: unknown } } | undefined;
    return typeof input?.config?.agent === 'string' ? input.config.agent : undefined;
  }

  /** True once the turn closed (its children are not waited for after that: a background one outlives it). */
  get closed(): boolean {
    return this.follower.closed;
  }

  /** Waits until the turn or an open child has news; `closed` once the turn closed. Rejects only when `signal` aborts. */
  async next(signal?: AbortSignal): Promise<FollowStep> {
    if (this.follower.closed) return 'closed';
    this.polling ??= this.follower.next(signal);
    const own = this.polling.then((step) => {
      this.polling = undefined;
      return step;
    });
    const open = [...this.children.values()].filter((c) => !c.closed);
    const first = await Promise.race([own.then((step) => ({ own: true, step })), ...open.map((c) => c.next(signal).then((step) => ({ own: false, step })))]);
    await this.discover(signal);
    return first.own ? first.step : 'changed';
  }

  /** Followers for the children the turn's history names that have none yet. */
  private async discover(signal?: AbortSignal): Promise<void> {
    for (const run of this.follower.current()) {
      for (const e of run.events) {
        if (e.kind !== 'childStarted' || parseSubAgentTurnId(e.workflowId)?.parentTurnId !== this.turnId) continue;
        if (this.children.has(e.workflowId) && !this.unloaded.has(e.workflowId)) continue;
        const child = this.children.get(e.workflowId) ?? new TurnTree(this.client, e.workflowId, this.build, this.onTrouble);
        this.children.set(e.workflowId, child);
        if (await child.load(signal)) this.unloaded.delete(e.workflowId);
        else this.unloaded.add(e.workflowId);
      }
    }
  }
}
