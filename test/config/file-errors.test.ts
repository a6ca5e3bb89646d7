/**
 * Errors about a file the user or a checkout named never quote the file: such a path may point
 * anywhere (`scripted:~/.aws/credentials`), and V8's JSON messages print the text's beginning.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSkill } from '../../activities/skills/catalog';
import { firstSyntaxError, JsonSyntaxError, parseJsonText } from '../../deterministic/json-text';
import { parseConfigFile, resolveSessionConfig } from '../../config/resolve';
import { loadReport } from '../../evals/runner/compare';
import { parseSuite } from '../../evals/runner/suite';
import { loadScript } from '../../scripted-model/script';

const SECRET = 'sk-live-7f3a9c0d2e';
const SECRET_LINE = `OPENAI_API_KEY=${SECRET}`;

function fileWith(name: string, text: string): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'harness-file-errors-')), name);
  writeFileSync(file, text);
  return file;
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    const e = err as Error & { hint?: string };
    return `${e.message}\n${e.hint ?? ''}`;
  }
  throw new Error('expected an error');
}

describe('parseJsonText', () => {
  it.each([
    ['a key=value line', SECRET_LINE, 1, 1, 'unexpected character'],
    ['a trailing comma', '{\n  "a": 1,\n}', 3, 1, 'expected a double-quoted property name'],
    ['a missing colon', '{"a" 1}', 1, 6, "expected ':' after a property name"],
    ['a missing comma', `{"k": "${SECRET}" "b": 1}`, 1, 28, "expected ',' or '}' after a property value"],
    ['an unclosed array', '[1, 2', 1, 6, 'unexpected end of input'],
    ['text after the value', '{} x', 1, 4, 'unexpected text after the JSON value'],
    ['an unterminated string', `"${SECRET}`, 1, 20, 'unterminated string'],
    ['a bad escape', '"a\\x"', 1, 3, 'invalid escape in a string'],
    ['a raw newline in a string', '"a\nb"', 1, 3, 'control character in a string'],
    ['a bad literal', '{"a": tru}', 1, 7, 'unexpected character'],
    ['a lone minus', '-', 1, 1, 'invalid number'],
    ['a byte order mark', '\uFEFF{}', 1, 1, 'unexpected character'],
    ['nothing', '', 1, 1, 'unexpected end of input'],
  ])('locates %s by line and column, without the text', (_what, text, line, column, what) => {
    let err: unknown;
    try {
      parseJsonText(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JsonSyntaxError);
    expect(err).toMatchObject({ line, column, what, message: `invalid JSON at line ${line}, column ${column} (${what})` });
    expect((err as Error).message).not.toContain(SECRET);
  });

  it('parses valid JSON as JSON.parse does', () => {
    expect(parseJsonText('{"a": [1, -2.5e3, "x\\u00e9", true, null, {}]}')).toEqual({ a: [1, -2500, 'xé', true, null, {}] });
  });

  it('agrees with JSON.parse on what is valid, over many broken variants of a document', () => {
    const doc = JSON.stringify({ steps: [{ content: 'a "quoted" \\ text', tool_calls: [{ name: 'x', arguments: { n: -1.5e2, ok: true, v: null } }] }], s: [] }, null, 1);
    const pieces = ['', ' ', ',', ':', '"', '\\', '{', '}', '[', ']', 'x', '0', '-', '.', 'e', 'tru', '\n'];
    let checked = 0;
    for (let at = 0; at <= doc.length; at++) {
      for (const piece of pieces) {
        for (const variant of [doc.slice(0, at) + piece + doc.slice(at), doc.slice(0, at) + piece + doc.slice(at + 1)]) {
          let valid = true;
          try {
            JSON.parse(variant);
          } catch {
            valid = false;
          }
          expect(firstSyntaxError(variant) === undefined, JSON.stringify(variant)).toBe(valid);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('does not overflow the stack on deep nesting', () => {
    expect(firstSyntaxError('['.repeat(100_000))).toEqual({ offset: 100_000, what: 'unexpected end of input' });
  });
});

describe('files a user or a checkout names', () => {
  it('a script file (`scripted:<file>`) that is not JSON: the error names the place, not the content', () => {
    const file = fileWith('credentials', `${SECRET_LINE}\nsecond line\n`);
    const message = messageOf(() => loadScript(file));
    expect(message).toContain(`${file}: invalid JSON at line 1, column 1 (unexpected character)`);
    expect(message).not.toContain(SECRET);
    expect(message).not.toContain('OPENAI_API_KEY');
  });

  it('the same through --model scripted:<file>, as a one-line usage error', () => {
    const file = fileWith('credentials.json', `{"steps": [], "key": "${SECRET}" oops}`);
    const message = messageOf(() => resolveSessionConfig({ model: `scripted:${file}` }, {}, os.tmpdir()));
    expect(message).toMatch(/invalid JSON at line 1, column \d+/);
    expect(message).not.toContain(SECRET);
    expect(message.split('\n')[0]).not.toContain('\n');
  });

  it('a config file', () => {
    const file = fileWith('harness.config.json', `${SECRET_LINE}\n`);
    const message = messageOf(() => parseConfigFile(file));
    expect(message).toContain(`${file}: invalid JSON at line 1, column 1`);
    expect(message).not.toContain(SECRET);
  });

  it('an eval suite line and a base report for --compare', () => {
    const suite = messageOf(() => parseSuite(`{"id": "a", "input": "x"}\n  ${SECRET_LINE}\n`, 's.jsonl'));
    expect(suite).toContain('s.jsonl:2: invalid JSON at column 3 (unexpected character)');
    expect(suite).not.toContain(SECRET);
    const report = messageOf(() => loadReport(fileWith('base.json', SECRET_LINE)));
    expect(report).toMatch(/base\.json: invalid JSON at line 1, column 1/);
    expect(report).not.toContain(SECRET);
  });

  it("a skill's front matter: where the YAML breaks, not the line itself", () => {
    const r = parseSkill(`---\nname: demo\ndescription: [${SECRET}\n---\nbody`);
    expect(r).toMatchObject({ problem: expect.stringMatching(/^front matter is not valid YAML \(.* at line \d+, column \d+\)$/) });
    expect(JSON.stringify(r)).not.toContain(SECRET);
    const alias = parseSkill(`---\nname: demo\ndescription: *${SECRET}\n---\nbody`);
    expect(JSON.stringify(alias)).not.toContain(SECRET);
  });
});
