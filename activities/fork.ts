/**
 * prepareFork: what a forked session needs before its first step, made on the worker (which
 * holds the message store): the recorded conversation copied into the fork's own store (a fork
 * is purged on its own, so it must not share the source's values), with the last user message
 * edited when asked, and the fork's workspace: the recorded turn's starting snapshot (or another
 * seed), then the files the turn wrote before the step over it. Idempotent: a retried attempt
 * stores the same chain and writes the same files.
 */
import type { ForkPrepared, ForkSpec } from '../common/session';
import type { ChatMessage } from '../common/types';
import { isBlobArg, type BlobArg } from '../common/conversation';
import { messageTokens, type Conversations } from './store/conversations';
import { withStore } from './store/errors';
import { writeFile } from './tools/files';
import { ensureWorkspace, sessionWorkspace } from './tools/workspace';
import { resolveArgs } from './store/views';
import { cp, lstat } from 'node:fs/promises';
import type { MessageStore } from './store/message-store';
import { restoreSnapshot } from './workspace-snapshot';

export interface ForkDeps {
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
    const script = fork.replay ? await storeScript(input.sessionId, source, fork.replay.conversation, messages.length) : undefined;
    return {
      conversation: { head, pending: [], count: messages.length, tokens },
      restored,
      problems,
      ...(script ? { script } : {}),
      ...(seeded !== undefined ? { seeded } : {}),
    };
  };

  /** The recorded replies after the fork point, as a script the scripted model replays. */
  async function storeScript(sessionId: string, source: string, recorded: NonNullable<ForkSpec['replay']>['conversation'], from: number): Promise<BlobArg> {
    const all = await withStore(() => deps.conversations.read(source, recorded));
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
