// Against the real Docker Engine: no skips. Without Docker or the sandbox image this test fails
// (CI runs `npm run setup`, which builds the image).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, freezePolicy } from '../../../deterministic/policy/decide';
import { parsePolicy } from '../../../deterministic/policy/schema';
import { commandLine, PLANTED, SEEDED } from './vocabulary';

const docker = new Docker();
const IMAGE = process.env.HARNESS_SANDBOX_IMAGE ?? 'harness-sandbox:latest';
const SEED = 20_240_611;
const GENERATED = 600;
const policy = freezePolicy(parsePolicy(undefined));

// `docker diff` takes about half a second: it is read after each batch of commands, and only a
// batch that changed something is replayed command by command in fresh containers to name it.
const BATCH = 10;

let workspace: string;
let main: Box;

interface Change {
  Path: string;
  Kind: number;
}

/** A throwaway container of the sandbox image and what its file system looked like at the start. */
interface Box {
  container: Docker.Container;
  baseline: Set<string>;
}

function describeChange(c: Change): string {
  return `${'CAD'[c.Kind] ?? c.Kind} ${c.Path}`;
}

/** The sandbox image, but a writable root file system and root: a write outside the workspace
 * that the hardened sandbox would refuse succeeds here, so `docker diff` shows it. */
async function startBox(): Promise<Box> {
  const container = await docker.createContainer({
    Image: IMAGE,
    name: `policy-property-${randomUUID().slice(0, 8)}`,
    User: '0:0',
    WorkingDir: '/workspace',
    Cmd: ['sleep', 'infinity'],
    NetworkDisabled: true,
    HostConfig: {
      Binds: [`${workspace}:/workspace`],
      Tmpfs: { '/tmp': 'rw,size=16m' },
      ReadonlyRootfs: false,
      NetworkMode: 'none',
      PidsLimit: 256,
      Memory: 256 * 1024 * 1024,
    },
  });
  boxes.push(container);
  await container.start();
  const box = { container, baseline: new Set<string>() };
  // Files outside the workspace for commands to read (and, if the policy failed, to change).
  await sh(box, 'mkdir -p /skills/z /root && echo secret > /etc/pw-x && echo s > /skills/z/run.py && echo r > /root/x');
  box.baseline = new Set(((await container.changes()) ?? []).map(describeChange));
  return box;
}
const boxes: Docker.Container[] = [];

/** Runs a command as root in /workspace, killed after 5 s; resolves when it has ended. */
async function sh(box: Box, cmd: string): Promise<number | null> {
  const exec = await box.container.exec({
    Cmd: ['timeout', '-s', 'KILL', '5', '/bin/sh', '-c', cmd],
    AttachStdout: true,
    AttachStderr: true,
    WorkingDir: '/workspace',
  });
  const stream = await exec.start({ hijack: true, stdin: false });
  await new Promise<void>((resolve, reject) => {
    stream.on('data', () => {});
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  return (await exec.inspect()).ExitCode;
}

/** What changed in the container's file system outside /workspace and /tmp since its baseline. */
async function outsideChanges(box: Box): Promise<string[]> {
  const changes = ((await box.container.changes()) ?? []) as Change[];
  return changes
    .map(describeChange)
    .filter((c) => !box.baseline.has(c))
    .filter((c) => !/^. \/(workspace|tmp)(\/|$)/.test(c));
}

/** Which commands of a batch changed something outside, each run alone in a fresh container. */
async function attribute(batch: string[]): Promise<{ command: string; changes: string[] }[]> {
  const found: { command: string; changes: string[] }[] = [];
  for (const command of batch) {
    const box = await startBox();
    await sh(box, command);
    const changes = await outsideChanges(box);
    if (changes.length) found.push({ command, changes });
    await box.container.remove({ force: true });
  }
  return found;
}

beforeAll(async () => {
  workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'policy-property-')));
  for (const file of SEEDED) {
    fs.mkdirSync(path.dirname(path.join(workspace, file)), { recursive: true });
    fs.writeFileSync(path.join(workspace, file), 'a\nb\nhello\n');
  }
  for (const [file, script] of Object.entries(PLANTED)) fs.writeFileSync(path.join(workspace, file), script, { mode: 0o755 });
  main = await startBox();
});

afterAll(async () => {
  for (const container of boxes) await container.remove({ force: true }).catch(() => undefined);
  if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
});

describe('the default policy against a real shell', () => {
  it('never allows a generated command that changes files outside /workspace and /tmp', async () => {
    const commands = [...new Set(fc.sample(commandLine, { seed: SEED, numRuns: GENERATED }))];
    const allowed = commands.filter((command) => decide(policy, { tool: 'run_shell', risk: 'dangerous', args: { command } }).decision === 'allow');
    const violations: { command: string; changes: string[] }[] = [];
    for (let i = 0; i < allowed.length; i += BATCH) {
      const batch = allowed.slice(i, i + BATCH);
      for (const command of batch) await sh(main, command);
      const changes = await outsideChanges(main);
      if (!changes.length) continue;
      const named = await attribute(batch);
      violations.push(...(named.length ? named : [{ command: batch.join(' ;; '), changes }]));
      // Later batches are judged on what they change themselves.
      for (const c of changes) main.baseline.add(c);
    }
    expect(violations).toEqual([]);
    // Not vacuous: a good share of the generated commands ran (29 of the 600 with this seed: the
    // exact analysis asks for much that the old one allowed; fuzz/policy runs thousands more).
    expect(allowed.length).toBeGreaterThanOrEqual(25);
  }, 300_000);

  it('sees a write outside the workspace when one happens, so the check above can fail', async () => {
    await sh(main, "python3 -c \"open('/etc/written-by-test','w')\"");
    expect(await outsideChanges(main)).toContain('A /etc/written-by-test');
  });
});
