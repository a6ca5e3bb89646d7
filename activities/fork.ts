/**
 * prepareFork: what a forked session needs before its first step, made on the worker (which
 * holds the message store): the recorded conversation copied into the fork's own store (a fork
 * is purged on its own, so it must not share the source's values), with the last user message
 * edited when asked, and the fork's workspace: the recorded turn's starting snapshot (or another
 * seed), then the files the turn wrote before the step over it. A rerun also gets the recorded
 * replies as its script and the recorded results of the calls that leave the sandbox, in its own
 * store. Idempotent: a retried attempt stores the same chain and writes the same files.
 */
import type { ForkPrepared, ForkSpec, RecordedEffects } from '../deterministic/fork';
import type { ChatMessage, ToolResult } from '../deterministic/types';
import { isBlobArg, type BlobArg } from '../deterministic/conversation';
import { messageTokens, type Conversations } from './store/conversations';
import { withStore } from './store/errors';
import { writeFile } from './tools/files';
import { ensureWorkspace, sessionWorkspace } from './tools/workspace';
import { resolveArgs } from './store/views';
import { cp, lstat } from 'node:fs/promises';
import type { MessageStore } from './store/message-store';
import { restoreSnapshot } from './workspace-snapshot';

interface ForkDeps {
  home: string;
  conversations: Conversations;
  /** The message store itself: a snapshot's files are read in batches. */
  store: () => Promise<MessageStore>;
  workspaceMaxBytes?: number;
}

export function createPrepareFork(deps: ForkDeps) {
  return async function prepareFork(input: { sessionId: string; fork: ForkSpec }): Promise<ForkPrepared> {
    const { fork } = input;
    const source = fork.from.sessionId;
    const problems: string[] = [];
    const messages = await withStore(() => deps.conversations.read(source, fork.conversation));
    if (fork.editMessage !== undefined) {
      const i = messages.map((m) => m.role).lastIndexOf('user');
      if (i < 0) problems.push('the conversation before the step has no user message to edit; it was not edited');
      else messages[i] = { ...messages[i]!, content: fork.editMessage } as ChatMessage;
    }
    const head = await withStore(() => deps.conversations.replace(input.sessionId, messages));
    // Content-addressed: the copy has the hash the config names.
    for (const hash of fork.copyBlobs ?? []) {
      await withStore(async () => deps.conversations.putText(input.sessionId, await deps.conversations.getText(source, hash)));
    }
    const tokens = messages.reduce((n, m) => n + messageTokens(m), 0);

    // The seed first: the turn's own writes go over it.
    let seeded: number | undefined;
    if (fork.seed && 'snapshot' in fork.seed) {
      const { snapshot, from } = fork.seed;
      const r = await withStore(() => restoreSnapshot(sessionWorkspace(deps.home, input.sessionId), from, snapshot, deps.store));
      seeded = r.files;
      problems.push(...r.problems);
    } else if (fork.seed) {
      seeded = await seedWorkspace(input.sessionId, fork.seed);
    }
    // Each file's final content at the step (appends applied in order), then one overwrite each.
    const files = new Map<string, { content: string; step: number }>();
    for (const w of fork.writes) {
      const text = isBlobArg(w.content) ? await withStore(() => deps.conversations.getText(source, (w.content as { $blob: string }).$blob)) : w.content;
      if (typeof text !== 'string') {
        problems.push(`${w.path} (step ${w.step}): its content is not in the record`);
        continue;
      }
      const before = w.append ? (files.get(w.path)?.content ?? '') : '';
      files.set(w.path, { content: before + text, step: w.step });
    }
    const restored: ForkPrepared['restored'] = [];
    if (files.size) {
      const ws = await ensureWorkspace(deps.home, input.sessionId);
      for (const [p, f] of files) {
        // The same confinement as the model's own writes: the paths come from a recorded model.
        const r = await writeFile(ws, { path: p, content: f.content }, deps.workspaceMaxBytes ? { maxBytes: deps.workspaceMaxBytes } : {});
        if (r.ok) restored.push({ path: p, step: f.step });
        else problems.push(`${p} (step ${f.step}): ${r.message ?? r.error_type}`);
      }
    }
    const recorded = fork.replay ? await withStore(() => deps.conversations.read(source, fork.replay!.conversation)) : undefined;
    const script = recorded ? await storeScript(input.sessionId, source, recorded, messages.length) : undefined;
    const effects = recorded && fork.replay?.effects ? await storeEffects(input.sessionId, fork, recorded) : undefined;
    return {
      conversation: { head, pending: [], count: messages.length, tokens },
      restored,
      problems,
      ...(script ? { script } : {}),
      ...(seeded !== undefined ? { seeded } : {}),
      ...(effects ? { recordedEffects: effects } : {}),
    };
  };

  /** The recorded replies after the fork point, as a script the scripted model replays. */
  async function storeScript(sessionId: string, source: string, all: ChatMessage[], from: number): Promise<BlobArg> {
    const steps = [];
    for (const m of all.slice(from)) {
      if (m.role !== 'assistant') continue;
      const calls = [];
      for (const c of m.tool_calls ?? []) {
        calls.push({ id: c.id, name: c.name, arguments: await wholeArguments(source, c.arguments) });
      }
      steps.push({ ...(m.content !== null || !calls.length ? { content: m.content ?? '' } : {}), ...(calls.length ? { tool_calls: calls } : {}) });
    }
    const text = JSON.stringify({ steps });
    return { $blob: await withStore(() => deps.conversations.putText(sessionId, text)), bytes: Buffer.byteLength(text, 'utf8'), preview: text.slice(0, 120) };
  }

  /**
   * The recorded result of each call that leaves the sandbox, stored in the rerun's own store as
   * the tool message the rerun's call gets (its own id, the recorded content), so the rerun's
   * conversation holds the record's result whole while its history holds a verdict and a reference.
   * A call whose result the recorded conversation lost (a compression summarised it) gets none.
   */
  async function storeEffects(sessionId: string, fork: ForkSpec, recorded: ChatMessage[]): Promise<RecordedEffects> {
    const results = new Map<string, string>();
    for (const m of recorded) if (m.role === 'tool') results.set(m.tool_call_id, m.content);
    const calls: RecordedEffects['calls'] = [];
    for (const e of fork.replay?.effects ?? []) {
      const content = results.get(e.recorded);
      if (content === undefined) {
        calls.push({ callId: e.callId, tool: e.tool });
        continue;
      }
      const message: ChatMessage = { role: 'tool', tool_call_id: e.callId, content };
      const ref = await withStore(() => deps.conversations.putMessage(sessionId, message));
      calls.push({ callId: e.callId, tool: e.tool, outcome: { ...verdict(content), stored: { ref, tokens: messageTokens(message) } } });
    }
    return { from: fork.from.turnId, calls };
  }

  /** Arguments as the model sent them: stored payloads read back in. */
  async function wholeArguments(source: string, text: string): Promise<string> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return text; // malformed on purpose or by the model: replayed as it was
    }
    const whole = await resolveArgs(parsed, (hash) => withStore(() => deps.conversations.getText(source, hash)));
    return JSON.stringify(whole);
  }

  /** Copies a session's workspace or a folder into the fork's (regular files and folders; links are skipped). */
  async function seedWorkspace(sessionId: string, seed: { session: string } | { dir: string }): Promise<number> {
    const from = 'session' in seed ? sessionWorkspace(deps.home, seed.session) : seed.dir;
    const to = await ensureWorkspace(deps.home, sessionId);
    let files = 0;
    await cp(from, to, {
      recursive: true,
      force: true,
      filter: async (src) => {
        const st = await lstat(src).catch(() => undefined);
        if (!st || st.isSymbolicLink()) return false;
        if (st.isFile()) files++;
        return st.isFile() || st.isDirectory();
      },
    }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    return files;
  };
}

// A recorded result's message and suggestion stay readable in the workflow's view (as resultView keeps them).
const VERDICT_CHARS = 300;

/** What the workflow keeps of a recorded tool result: whether it succeeded, and why not. */
function verdict(content: string): ToolResult {
  let r: Partial<ToolResult> | undefined;
  try {
    r = JSON.parse(content) as Partial<ToolResult>;
  } catch {
    r = undefined;
  }
  if (!r || typeof r !== 'object') return { ok: false, message: 'the recorded result is not a tool result' };
  const clip = (t: unknown) => (typeof t === 'string' ? (t.length > VERDICT_CHARS ? `${t.slice(0, VERDICT_CHARS)}…` : t) : undefined);
  const message = clip(r.message);
  const suggestion = clip(r.suggestion);
  return {
    ok: r.ok === true,
    ...(typeof r.error_type === 'string' ? { error_type: r.error_type } : {}),
    ...(message !== undefined ? { message } : {}),
    ...(typeof r.recoverable === 'boolean' ? { recoverable: r.recoverable } : {}),
    ...(suggestion !== undefined ? { suggestion } : {}),
  };
}
