import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSkills, parseSkill } from '../../../activities/skills/catalog';

const PROJECT_SKILLS = path.resolve(__dirname, '../../../skills');
const temps: string[] = [];

/** A temp skills folder with the given `<folder>/SKILL.md` texts (and optional extra files). */
function skillsFolder(files: Record<string, string>): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'skills-test-')));
  temps.push(root);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

const skillMd = (name: string, description = `The ${name} skill does a thing.`, body = `Run ${name}.`) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

afterEach(() => {
  for (const t of temps.splice(0)) fs.rmSync(t, { recursive: true, force: true });
});

describe('loadSkills', () => {
  it('loads the three shipped skills with their descriptions, bodies, folders and scripts', () => {
    const { skills, problems } = loadSkills([PROJECT_SKILLS]);
    expect(problems).toEqual([]);
    expect(skills.map((s) => s.name).sort()).toEqual(['csv_summary', 'project_overview', 'word_count']);
    const wc = skills.find((s) => s.name === 'word_count')!;
    expect(wc).toMatchObject({ folder: path.join(PROJECT_SKILLS, 'word_count'), source: PROJECT_SKILLS, scripts: ['count.py'] });
    expect(wc.description).toMatch(/lines, words and characters/);
    expect(wc.body).toContain('python3 /skills/word_count/count.py <file>');
    expect(wc.body).not.toContain('---');
    expect(skills.find((s) => s.name === 'csv_summary')!.scripts).toEqual(['summarize.py']);
    expect(skills.find((s) => s.name === 'project_overview')!.scripts).toEqual(['overview.py']);
  });

  it('skips a SKILL.md without front matter and names its path', () => {
    const root = skillsFolder({ 'plain/SKILL.md': '# Just markdown\n', 'good/SKILL.md': skillMd('good') });
    const { skills, problems } = loadSkills([root]);
    expect(skills.map((s) => s.name)).toEqual(['good']);
    expect(problems).toEqual([`${path.join(root, 'plain', 'SKILL.md')}: no YAML front matter (the file must start with a "---" line and close it with another "---" line); skipped`]);
  });

  it('skips skills with no name, no description, an invalid name or broken YAML, one message each with the path', () => {
    const root = skillsFolder({
      'noname/SKILL.md': '---\ndescription: Has no name at all.\n---\nbody',
      'nodesc/SKILL.md': '---\nname: nodesc\n---\nbody',
      'badname/SKILL.md': '---\nname: Bad Name\ndescription: Upper case and a space.\n---\n',
      'badyaml/SKILL.md': '---\nname: [unclosed\ndescription: x\n---\n',
      'list/SKILL.md': '---\n- a\n- b\n---\n',
      'unclosed/SKILL.md': '---\nname: unclosed\ndescription: never closed\n',
    });
    const { skills, problems } = loadSkills([root]);
    expect(skills).toEqual([]);
    const byFolder = (f: string) => problems.find((p) => p.startsWith(path.join(root, f, 'SKILL.md') + ': '));
    expect(byFolder('noname')).toMatch(/front matter has no name; skipped$/);
    expect(byFolder('nodesc')).toMatch(/front matter has no description; skipped$/);
    expect(byFolder('badname')).toMatch(/invalid name "Bad Name"/);
    expect(byFolder('badyaml')).toMatch(/front matter is not valid YAML/);
    expect(byFolder('list')).toMatch(/must be a YAML mapping/);
    expect(byFolder('unclosed')).toMatch(/no YAML front matter/);
    expect(problems).toHaveLength(6);
  });

  it('keeps the first skill of a duplicate name (project folder first) and reports the second with both paths', () => {
    const project = skillsFolder({ 'wc/SKILL.md': skillMd('dup', 'Project version of the skill.') });
    const extra = skillsFolder({ 'other/SKILL.md': skillMd('dup', 'Extra version of the skill.'), 'fresh/SKILL.md': skillMd('fresh') });
    const { skills, problems } = loadSkills([project, extra]);
    expect(skills.map((s) => [s.name, s.source])).toEqual([
      ['dup', project],
      ['fresh', extra],
    ]);
    expect(skills[0]!.description).toBe('Project version of the skill.');
    expect(problems).toEqual([
      `${path.join(extra, 'other', 'SKILL.md')}: duplicate skill name "dup" (already defined by ${path.join(project, 'wc', 'SKILL.md')}); skipped`,
    ]);
  });

  it('reports a missing skills folder without failing, ignores folders without SKILL.md, and reads a folder listed twice once', () => {
    const root = skillsFolder({ 'a/SKILL.md': skillMd('a'), 'notes/README.md': 'not a skill', 'loose.txt': 'x' });
    const missing = path.join(root, 'does-not-exist');
    const { skills, problems } = loadSkills([root, missing, root]);
    expect(skills.map((s) => s.name)).toEqual(['a']);
    expect(problems).toEqual([`${missing}: skills folder cannot be read (ENOENT)`]);
  });

  it('lists nested resources but leaves out hidden files and Python caches', () => {
    const root = skillsFolder({
      's/SKILL.md': skillMd('s'),
      's/run.py': 'print(1)',
      's/data/table.csv': 'a\n1\n',
      's/.hidden': 'x',
      's/__pycache__/run.cpython-311.pyc': 'x',
    });
    expect(loadSkills([root]).skills[0]!.scripts).toEqual(['data/table.csv', 'run.py']);
  });
});

describe('parseSkill', () => {
  it('accepts CRLF line endings, a byte-order mark, quoted and folded descriptions', () => {
    const text = '\uFEFF---\r\nname: "crlf"\r\ndescription: >\r\n  Folded over\r\n  two lines.\r\n---\r\n# Body\r\n';
    expect(parseSkill(text)).toEqual({ name: 'crlf', description: 'Folded over two lines.', body: '# Body' });
  });

  it('rejects a description longer than 1024 characters and a non-string name', () => {
    expect(parseSkill(`---\nname: long\ndescription: ${'x'.repeat(1025)}\n---\n`)).toEqual({ problem: 'description is longer than 1024 characters' });
    expect(parseSkill('---\nname: 42\ndescription: numbers are not names\n---\n')).toMatchObject({ problem: expect.stringMatching(/invalid name 42/) });
  });
});
