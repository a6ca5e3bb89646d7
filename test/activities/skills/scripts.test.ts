// The shipped skill scripts, run with the host's python3 exactly as the sandbox runs them.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SKILLS = path.resolve(__dirname, '../../../skills');
let dir: string;

function py(script: string, ...args: string[]): { code: number; stdout: string; stderr: string } {
  const r = spawnSync('python3', [path.join(SKILLS, script), ...args], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, LANG: 'C.UTF-8' } });
  if (r.error) throw r.error;
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const write = (rel: string, text: string | Buffer): void => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), text);
};

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skill-scripts-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('word_count/count.py', () => {
  it('prints lines, words and characters of a file, counting a last line without newline and Unicode characters', () => {
    write('poem.txt', 'hello world\nsecond line here\nthird');
    expect(py('word_count/count.py', 'poem.txt')).toEqual({ code: 0, stdout: 'lines=3 words=6 chars=34\n', stderr: '' });
    write('unicode.txt', 'héllo wörld 你好\n');
    expect(py('word_count/count.py', 'unicode.txt').stdout).toBe('lines=1 words=3 chars=15\n');
    write('empty.txt', '');
    expect(py('word_count/count.py', 'empty.txt').stdout).toBe('lines=0 words=0 chars=0\n');
  });

  it('prefixes each of several files with its path, adds a total, and fails with a message for a missing file', () => {
    expect(py('word_count/count.py', 'poem.txt', 'unicode.txt').stdout).toBe(
      'poem.txt: lines=3 words=6 chars=34\nunicode.txt: lines=1 words=3 chars=15\ntotal: lines=4 words=9 chars=49\n',
    );
    const r = py('word_count/count.py', 'missing.txt');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('count.py: missing.txt: No such file or directory\n');
  });
});

describe('csv_summary/summarize.py', () => {
  const csv = ['id,name,price,qty,in_stock,added', '1,apple,1.5,10,yes,2024-01-05', '2,banana,0.25,,no,2024-02-10', '3,cherry,10,7,yes,2023-12-31', '4,apple,2.75,3,yes,', ''].join('\n');

  it('reports rows, columns, types, missing values and min/max/mean of numeric columns', () => {
    write('items.csv', csv);
    const r = py('csv_summary/summarize.py', 'items.csv');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      "file=items.csv rows=4 columns=6 delimiter=','",
      '- id: type=integer filled=4 missing=0 distinct=4 min=1 max=4 mean=2.5',
      "- name: type=text filled=4 missing=0 distinct=3 top='apple' (2), 'banana' (1), 'cherry' (1)",
      '- price: type=float filled=4 missing=0 distinct=4 min=0.25 max=10 mean=3.625',
      '- qty: type=integer filled=3 missing=1 distinct=3 min=3 max=10 mean=6.66667',
      "- in_stock: type=boolean filled=4 missing=0 distinct=2 top='yes' (3), 'no' (1)",
      '- added: type=date filled=3 missing=1 distinct=3 min=2023-12-31 max=2024-02-10',
      '',
    ]);
  });

  it('sniffs a semicolon delimiter, prints JSON on request and warns about ragged rows', () => {
    write('semi.csv', 'a;b\n1;x\n2;y;extra\n');
    const s = JSON.parse(py('csv_summary/summarize.py', 'semi.csv', '--json').stdout);
    expect(s).toMatchObject({ rows: 2, columns: 3, delimiter: ';', ragged_rows: 1 });
    expect(s.column_summaries[0]).toMatchObject({ name: 'a', type: 'integer', min: 1, max: 2, mean: 1.5 });
    expect(s.column_summaries[2]).toMatchObject({ name: 'column_3', filled: 1, missing: 1 });
    expect(py('csv_summary/summarize.py', 'semi.csv').stdout).toContain('warning: 1 rows have a different number of fields than the header');
  });

  it('handles an empty file, --no-header, and a missing file with exit status 1', () => {
    write('empty.csv', '');
    expect(py('csv_summary/summarize.py', 'empty.csv').stdout).toBe("file=empty.csv rows=0 columns=0 delimiter=','\n");
    write('nohead.csv', '5,7\n6,8\n');
    expect(py('csv_summary/summarize.py', 'nohead.csv', '--no-header').stdout).toContain('- column_1: type=integer filled=2 missing=0 distinct=2 min=5 max=6 mean=5.5');
    expect(py('csv_summary/summarize.py', 'nope.csv')).toMatchObject({ code: 1, stderr: 'summarize.py: nope.csv: No such file or directory\n' });
  });
});

describe('project_overview/overview.py', () => {
  it('shows summary, tree with sizes, languages, largest files and TODO counts, skipping node_modules', () => {
    const proj = 'proj';
    write(`${proj}/README.md`, '# Demo\n\nTODO: write docs\n');
    write(`${proj}/src/main.py`, 'def main():\n    # TODO: handle errors\n    # FIXME later\n    return 1\n');
    write(`${proj}/src/util.ts`, 'export const x = 1;\n');
    write(`${proj}/data/big.bin`, Buffer.alloc(5000, 0));
    write(`${proj}/node_modules/dep/index.js`, '// TODO hidden\n');
    const r = py('project_overview/overview.py', proj);
    expect(r.code).toBe(0);
    const out = r.stdout;
    expect(out).toMatch(/^== summary\nfolder=.*proj files=4 folders=2 size=5\.0 KB\nskipped: node_modules \(use --all to include\)\n/);
    expect(out).toContain('  data/  (4.9 KB, 1 file)\n    big.bin  (4.9 KB)\n');
    expect(out).toContain('  src/  (89 B, 2 files)\n    main.py  (69 B)\n    util.ts  (20 B)\n');
    expect(out).toContain('Python: files=1 lines=4 size=69 B');
    expect(out).toContain('TypeScript: files=1 lines=1 size=20 B');
    expect(out).toContain('Markdown: files=1 lines=3 size=25 B');
    expect(out).toMatch(/== largest files \(top 10\)\n\s+4\.9 KB {2}data\/big\.bin\n/);
    expect(out).toMatch(/== todos total=3 \(TODO, FIXME, XXX, HACK\)\n\s+2 {2}src\/main\.py\n\s+1 {2}README\.md\n?$/);
    expect(py('project_overview/overview.py', proj, '--all').stdout).toMatch(/== todos total=4/);
  });

  it('fails with a message when the folder does not exist', () => {
    expect(py('project_overview/overview.py', 'no-such-folder')).toMatchObject({ code: 1, stderr: 'overview.py: no-such-folder: not a folder\n' });
  });
});
