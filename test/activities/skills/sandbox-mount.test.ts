// Layer 3 against the real Docker Engine (image harness-sandbox:latest): skills mounted read-only.
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerName, containerSpec, DEFAULT_LIMITS } from '../../../activities/sandbox/containers';
import { DockerSandbox } from '../../../activities/sandbox/docker-sandbox';
import { removeOrphans } from '../../../activities/sandbox/containers';
import { loadSkills } from '../../../activities/skills/catalog';
import { skillMounts } from '../../../activities/skills/use-skill';

const docker = new Docker();
const mounts = skillMounts(loadSkills([path.resolve(__dirname, '../../../skills')]).skills);
let home: string;
let sb: DockerSandbox;
const sessionId = `skills-${randomUUID().slice(0, 8)}`;
const run = (s: DockerSandbox, cmd: string) => s.exec(cmd, { timeoutMs: 20_000 });

beforeAll(async () => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'skills-sandbox-')));
  sb = new DockerSandbox({ home, sessionId, skillsMounts: mounts });
  await sb.ensure();
});

afterAll(async () => {
  await removeOrphans(docker, [], { home });
  fs.rmSync(home, { recursive: true, force: true });
});

describe('skills mounted in the DockerSandbox', () => {
  it('runs python3 /skills/word_count/count.py on a workspace file', async () => {
    fs.writeFileSync(path.join(home, 'workspaces', sessionId, 'x.txt'), 'one two three\nfour five\n');
    expect(await run(sb, 'python3 /skills/word_count/count.py /workspace/x.txt')).toMatchObject({ exitCode: 0, stdout: 'lines=2 words=5 chars=24\n' });
  });

  it('runs the other shipped skills on workspace files', async () => {
    fs.writeFileSync(path.join(home, 'workspaces', sessionId, 't.csv'), 'n,v\na,1\nb,3\n');
    const csv = await run(sb, 'python3 /skills/csv_summary/summarize.py t.csv');
    expect(csv.stdout).toContain('- v: type=integer filled=2 missing=0 distinct=2 min=1 max=3 mean=2');
    const overview = await run(sb, 'python3 /skills/project_overview/overview.py');
    expect(overview).toMatchObject({ exitCode: 0 });
    expect(overview.stdout).toMatch(/== summary\nfolder=\/workspace files=2/);
  });

  it('keeps /skills read-only: even world-writable skill files cannot be changed, deleted or added to', async () => {
    // World-writable on the host, so only the read-only mount (not file modes) stops the writes.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'skills-rw-'));
    fs.mkdirSync(path.join(root, 'open'));
    fs.writeFileSync(path.join(root, 'open', 'SKILL.md'), '---\nname: open\ndescription: World-writable skill.\n---\nbody\n');
    fs.chmodSync(path.join(root, 'open'), 0o777);
    fs.chmodSync(path.join(root, 'open', 'SKILL.md'), 0o666);
    const id = `skills-${randomUUID().slice(0, 8)}`;
    const s = new DockerSandbox({ home, sessionId: id, skillsMounts: skillMounts(loadSkills([root]).skills) });
    try {
      expect((await run(s, 'cat /skills/open/SKILL.md')).stdout).toContain('name: open');
      for (const cmd of ['echo x >> /skills/open/SKILL.md', 'rm /skills/open/SKILL.md', 'touch /skills/open/new.txt', 'mkdir /skills/evil']) {
        const r = await run(s, cmd);
        expect(r.exitCode, cmd).not.toBe(0);
        expect(r.stderr, cmd).toMatch(/Read-only file system/);
      }
      expect(fs.readFileSync(path.join(root, 'open', 'SKILL.md'), 'utf8')).not.toContain('x\n');
      expect((await run(sb, 'echo x >> /skills/word_count/count.py')).exitCode).not.toBe(0);
      expect((await run(sb, 'ls /skills')).stdout.split('\n').filter(Boolean).sort()).toEqual(['csv_summary', 'project_overview', 'word_count']);
    } finally {
      await s.remove();
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('recreates a container made without the skills mounts when they are asked for', async () => {
    const id = `skills-${randomUUID().slice(0, 8)}`;
    await run(new DockerSandbox({ home, sessionId: id }), 'echo kept > kept.txt');
    expect((await run(new DockerSandbox({ home, sessionId: id }), 'ls /skills')).exitCode).not.toBe(0);
    const withSkills = new DockerSandbox({ home, sessionId: id, skillsMounts: mounts });
    expect(await run(withSkills, 'cat kept.txt && ls /skills/word_count')).toMatchObject({ exitCode: 0, stdout: 'kept\nSKILL.md\ncount.py\n' });
    const info = await docker.getContainer(containerName(id)).inspect();
    expect(info.Mounts.filter((m) => m.Destination.startsWith('/skills/')).every((m) => m.RW === false)).toBe(true);
  });
});

describe('containerSpec', () => {
  it('adds skills as read-only bind mounts only when given', () => {
    const base = { name: 'n', image: 'i', user: '1000:1000', sessionId: 's', home: '/h', workspace: '/h/w', limits: DEFAULT_LIMITS };
    expect(containerSpec(base).HostConfig?.Mounts).toBeUndefined();
    const spec = containerSpec({ ...base, skillsMounts: [{ host: '/opt/skills/a:b', container: '/skills/a' }] });
    expect(spec.HostConfig?.Mounts).toEqual([{ Type: 'bind', Source: '/opt/skills/a:b', Target: '/skills/a', ReadOnly: true }]);
    expect(spec.HostConfig?.Binds).toEqual(['/h/w:/workspace:rw']);
  });
});
