import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSkills, type Skill } from '../../../activities/skills/catalog';
import { skillMounts, skillsIndex, useSkill, useSkillParams } from '../../../activities/skills/use-skill';

const shipped = loadSkills([path.resolve(__dirname, '../../../skills')]);

const fake = (name: string, body: string, description = `Does ${name}.`): Skill => ({
  name,
  description,
  body,
  folder: `/host/skills/${name}`,
  source: '/host/skills',
  scripts: ['run.py'],
});

describe('skillsIndex (layer 1)', () => {
  it('lists every skill with its description under a Skills heading and says how to use them', () => {
    const index = skillsIndex(shipped.skills);
    expect(index.split('\n')[0]).toBe('## Skills');
    expect(index).toContain('use_skill');
    expect(index).toContain('/skills/<name>');
    for (const s of shipped.skills) expect(index).toContain(`- ${s.name}: ${s.description}`);
    expect(index).not.toContain('python3'); // bodies stay out of the system message
    expect(index.length).toBeLessThan(1_500);
  });

  it('is empty without skills and cuts a long description short', () => {
    expect(skillsIndex([])).toBe('');
    const index = skillsIndex([fake('long', '', 'word '.repeat(200).trim())]);
    const line = index.split('\n').find((l) => l.startsWith('- long: '))!;
    expect(line.length).toBeLessThanOrEqual(250);
    expect(line.endsWith('…')).toBe(true);
  });
});

describe('useSkill (layer 2)', () => {
  it('returns the body, the mount path and the mounted files of a skill', () => {
    const r = useSkill(shipped, { name: 'word_count' });
    expect(r.ok).toBe(true);
    expect(r.result).toMatchObject({
      name: 'word_count',
      truncated: false,
      mounted_at: '/skills/word_count',
      files: ['/skills/word_count/count.py'],
    });
    expect((r.result as { instructions: string }).instructions).toContain('python3 /skills/word_count/count.py <file>');
  });

  it('caps a large body, says so and points at the full SKILL.md in the sandbox', () => {
    const body = 'é'.repeat(15_000); // 30,000 bytes of two-byte characters
    const r = useSkill({ skills: [fake('big', body)] }, { name: 'big' });
    const res = r.result as { instructions: string; truncated: boolean };
    expect(res.truncated).toBe(true);
    expect(res.instructions).toMatch(/\[truncated: showing the first 20000 of 30000 bytes; .*cat \/skills\/big\/SKILL\.md\]$/);
    expect(res.instructions).not.toContain('\uFFFD');
    const small = useSkill({ skills: [fake('big', body)] }, { name: 'big' }, { maxBytes: 101 });
    expect((small.result as { instructions: string }).instructions).toMatch(/^é{50}\n\n\[truncated: showing the first 100 of 30000 bytes/);
  });

  it('answers an unknown name with a structured error listing the available skills', () => {
    const r = useSkill(shipped, { name: 'spell_check' });
    expect(r).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS', recoverable: true });
    expect(r.message).toBe('unknown skill "spell_check"; available skills: csv_summary, project_overview, word_count');
    expect(r.suggestion).toContain('csv_summary, project_overview, word_count');
    expect(useSkill({ skills: [] }, { name: 'x' }).message).toBe('unknown skill "x"; no skills are installed');
  });

  it('accepts a name in another case and rejects missing arguments as INVALID_ARGUMENTS', () => {
    expect(useSkill(shipped, { name: ' Word_Count ' }).ok).toBe(true);
    expect(useSkill(shipped, {})).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS', message: expect.stringContaining('name') });
    expect(useSkillParams.safeParse({ name: '' }).success).toBe(false);
  });
});

describe('skillMounts (layer 3)', () => {
  it('mounts each skill folder at /skills/<name>', () => {
    expect(skillMounts([fake('a', ''), fake('b', '')])).toEqual([
      { host: '/host/skills/a', container: '/skills/a' },
      { host: '/host/skills/b', container: '/skills/b' },
    ]);
  });
});
