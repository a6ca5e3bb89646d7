/**
 * Serves scripted-model sessions from inside the worker: a lazily started local HTTP server
 * (reached through the real openai client), scripts persisted under HARNESS_HOME so a
 * restarted worker keeps serving a session whose CLI is long gone.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseScript } from '../scripted/script';
import { startScriptedModel, type ScriptedModelServer } from '../scripted/server';
import { registerOwnPort } from './tools/own-ports';

export class ScriptedHost {
  private server: Promise<ScriptedModelServer> | undefined;
  /** Removes the server's port from the worker's own ports once it is closed. */
  private forget: (() => void) | undefined;
  private readonly known = new Set<string>();

  constructor(private readonly home: string) {}

  /** Validates and stores a session's script, then registers it with the server. */
  async register(sessionId: string, script: unknown): Promise<void> {
    const parsed = parseScript(script, `script of session ${sessionId}`);
    const file = this.file(sessionId);
    await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify(parsed));
    await rename(tmp, file);
    (await this.start()).registerScript(sessionId, parsed);
    this.known.add(sessionId);
  }

  /** Base URL to reach the session's script; reloads it from disk after a worker restart. */
  async baseUrl(sessionId: string): Promise<string> {
    const server = await this.start();
    if (!this.known.has(sessionId)) {
      const text = await readFile(this.file(sessionId), 'utf8').catch(() => undefined);
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
    this.server ??= startScriptedModel({ host: '127.0.0.1', port: 0 }).then((server) => {
      this.forget = registerOwnPort(server.port, 'scripted model server');
      return server;
    });
    return this.server;
  }

  private file(sessionId: string): string {
    return path.join(this.home, 'scripts', `${encodeURIComponent(sessionId)}.json`);
  }
}
