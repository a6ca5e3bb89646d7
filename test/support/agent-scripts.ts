/**
 * Scripted models for agents in tests: an agent's model is `scripted:<file>`, so each script is
 * written to a file of its own in the test's folder.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Script } from '../../scripted-model/script';

/** Writes each script given to a new file under `dir` and returns its `scripted:<file>` model. */
export function scriptFiles(dir: string): (script: Script) => string {
  return (script) => {
    const f = path.join(dir, `script-${randomUUID().slice(0, 8)}.json`);
    writeFileSync(f, JSON.stringify(script));
    return `scripted:${f}`;
  };
}
