/**
 * Serves scripted-model sessions from inside the worker: a lazily started local HTTP server
 * (reached through the real openai client), scripts persisted in the session's message store
 * (under HARNESS_HOME when there is none) so a restarted worker keeps serving a session whose
 * CLI is long gone, and a worker with another HARNESS_HOME (another sandbox host) does too.
 */
import { ApplicationFailure } from '@temporalio/common';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseScript } from '../scripted-model/script';
import { startScriptedModel, type ScriptedModelServer } from '../scripted-model/server';
import { registerOwnPort } from './tools/own-ports';
import type { MessageStore } from './store/message-store';
import { withStore } from './store/errors';

/** The key of a session's script among its stored blobs. */
const SCRIPT_KEY = 'scripted-model-script';

export class ScriptedModels {
  private server: Promise<ScriptedModelServer> | undefined;
  /** Removes the server's port from the worker's own ports once it is closed. */
  private forget: (() => void) | undefined;
  private readonly known = new Set<string>();
  private store: (() => Promise<MessageStore>) | undefined;

  constructor(private readonly home: string) {}

  /** The message store scripts are kept in too (createActivities gives it its own). */
  useStore(store: () => Promise<MessageStore>): void {
    this.store = store;
  }

  /** Validates and stores a session's script, then registers it with the server. */
  async register(sessionId: string, script: unknown): Promise<void> {
    const parsed = parseScript(script, `script of session ${sessionId}`);
    const body = JSON.stringify(parsed);
    // A session's script never changes: written once, under a key no content hash can be. The
    // stored copy serves every worker, this one after a restart too (baseUrl reads it back), so
    // the file is written only where there is no store or it failed: one write a session, not
    // three file operations and a write (every eval trial is a session).
    const stored = this.store ? await withStore(async () => (await this.store!()).putBlobs(sessionId, [{ hash: SCRIPT_KEY, body }])).then(() => true, () => false) : false;
    if (!stored) {
      const file = this.file(sessionId);
      await mkdir(path.dirname(file), { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      await writeFile(tmp, body);
      await rename(tmp, file);
    }
    (await this.start()).registerScript(sessionId, parsed);
    this.known.add(sessionId);
  }

  /**
   * Base URL to reach the session's script; reloads it from disk after a worker restart. A call
   * that brings the script (a turn prepared by its caller) registers it here, with no stored copy:
   * every call of such a turn brings it.
   */
  async baseUrl(sessionId: string, script?: unknown): Promise<string> {
    const server = await this.start();
    if (!this.known.has(sessionId) && script !== undefined) {
      let parsed;
      try {
        parsed = parseScript(script, `script of session ${sessionId}`);
      } catch (err) {
        throw ApplicationFailure.nonRetryable((err as Error).message, 'INVALID_SCRIPT');
      }
      server.registerScript(sessionId, parsed);
      this.known.add(sessionId);
    }
    if (!this.known.has(sessionId)) {
      const text = (await readFile(this.file(sessionId), 'utf8').catch(() => undefined)) ?? (await this.fromStore(sessionId));
      if (text === undefined) throw new Error(`no scripted model is registered for session ${sessionId}`);
      server.registerScript(sessionId, parseScript(JSON.parse(text), this.file(sessionId)));
      this.known.add(sessionId);
    }
    return server.url;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    const server = await this.server;
    await server.close();
    this.forget?.();
  }

  private start(): Promise<ScriptedModelServer> {
    // Registered as the worker's own, so http_request never reaches it (its scripts drive tool calls).
    this.server ??= startScriptedModel({ host: '127.0.0.1', port: 0, record: false }).then((server) => {
      this.forget = registerOwnPort(server.port, 'scripted model server');
      return server;
    });
    return this.server;
  }

  private async fromStore(sessionId: string): Promise<string | undefined> {
    if (!this.store) return undefined;
    return withStore(async () => (await (await this.store!()).getBlobs(sessionId, [SCRIPT_KEY])).get(SCRIPT_KEY));
  }

  private file(sessionId: string): string {
    return path.join(this.home, 'scripts', `${encodeURIComponent(sessionId)}.json`);
  }
}
