/**
 * Writes reference histories into test/histories/<label>/ for the recorders (record-*.ts): each
 * id's every run, oldest first, as the Temporal CLI shows it (the canonical history JSON that
 * historyFromJSON and the UI read); an id Temporal does not know writes nothing. A turn that
 * continued as new has several runs: `<session>.turn-1.run2.json` is the second; an id with
 * one run is `<session>.turn-1.json`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { findTemporalCli } from '../client/temporal-cli';
import { workflowRuns } from '../history/workflow-runs';

export async function writeHistories(client: Client, address: string, label: string, ids: readonly string[]): Promise<void> {
  const dir = path.resolve(__dirname, '..', '..', 'test', 'histories', label);
  mkdirSync(dir, { recursive: true });
  for (const id of ids) {
    // Every run, oldest first, even one visibility does not list yet; none for an unknown id.
    const runs = await workflowRuns(client, id);
    for (const [i, run] of runs.entries()) {
      const json = execFileSync(findTemporalCli(), ['workflow', 'show', '--workflow-id', id, '--run-id', run.runId, '--address', address, '--output', 'json'], { encoding: 'utf8' });
      const file = path.join(dir, `${id.replaceAll('/', '.')}${runs.length > 1 ? `.run${i + 1}` : ''}.json`);
      writeFileSync(file, json);
      console.error(`wrote ${file} (${JSON.parse(json).events.length} events)`);
    }
  }
}
