/**
 * The eval cache: a trial whose case, model and session settings are unchanged is not paid for
 * again. Its report is kept under HARNESS_HOME/evals/cache by a key over everything that shapes
 * the trial (the case as validated, its trial number, the model, the session config and the
 * harness version); a changed fixture, check, script, prompt or limit is a new key.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { EvalCase, TrialReport } from '../../deterministic/eval';
import type { SessionConfig } from '../../deterministic/session-config';
import { canonicalJson } from '../../deterministic/digest';

interface TrialKey {
  case: EvalCase;
  trial: number;
  model: string;
  config: SessionConfig;
  version: string;
}

export class EvalCache {
  constructor(private readonly dir: string) {}

  key(k: TrialKey): string {
    const { line: _line, ...c } = k.case; // where a case sits in its file changes nothing
    return createHash('sha256').update(canonicalJson({ ...k, case: c })).digest('hex');
  }

  get(key: string): TrialReport | undefined {
    try {
      return JSON.parse(readFileSync(this.file(key), 'utf8')) as TrialReport;
    } catch {
      return undefined;
    }
  }

  put(key: string, report: TrialReport): void {
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(this.file(key), JSON.stringify(report));
  }

  private file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }
}

/** What the harness's behaviour depends on, for cache keys: the workflow bundle (hashed once). */
export function harnessVersion(bundlePath: string): string {
  try {
    return createHash('sha256').update(readFileSync(bundlePath)).digest('hex').slice(0, 16);
  } catch {
    return 'unbuilt';
  }
}
