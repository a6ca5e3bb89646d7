/**
 * The skill catalog: folders of `<skill>/SKILL.md` files (YAML front matter `name` and
 * `description`, the common Agent Skills format, then a Markdown body) plus the scripts and
 * resources beside them. Loading never throws for a bad skill: each problem is reported with
 * its path and the skill is skipped, so one broken folder cannot stop a worker.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';

/** A loaded skill. */
export interface Skill {
  /** Unique name, lower case: /^[a-z0-9][a-z0-9_-]*$/; the sandbox mount is /skills/<name>. */
  name: string;
  /** What the skill does and when to use it (layer 1: shown in the system message). */
  description: string;
  /** Absolute host path of the skill's folder (mounted read-only in the sandbox). */
  folder: string;
  /** The Markdown after the front matter (layer 2: returned by use_skill). */
  body: string;
  /** The skills folder this skill was found in (absolute). */
  source: string;
  /** Files beside SKILL.md, relative to the skill folder, sorted (scripts and resources). */
  scripts: string[];
}

/** The result of a scan: the valid skills and one line per skipped skill or folder. */
export interface SkillCatalog {
  skills: Skill[];
  problems: string[];
}

/** Valid skill names: also safe as a path segment under /skills. */
const SKILL_NAME = /^[a-z0-9][a-z0-9_-]*$/;
/** Longest accepted name and description (the Agent Skills limits). */
const MAX_NAME_LENGTH = 64;
const MAX_DESCRIPTION_LENGTH = 1024;
/** A SKILL.md larger than this is refused rather than read into memory. */
const MAX_SKILL_FILE_BYTES = 1_000_000;
// Listing stops here: a skill folder is a handful of scripts, not a dataset.
const MAX_LISTED_FILES = 200;
const MAX_LIST_DEPTH = 4;
const IGNORED = new Set(['SKILL.md', '__pycache__', 'node_modules', '.git']);

/**
 * Scans each folder (in order) for `*\/SKILL.md`. Earlier folders win: a later skill with a
 * name already taken is reported as a duplicate and skipped, so the project's `skills/` given
 * first cannot be shadowed by an extra folder.
 */
export function loadSkills(folders: string[]): SkillCatalog {
  const skills: Skill[] = [];
  const problems: string[] = [];
  const byName = new Map<string, Skill>();
  const seen = new Set<string>();
  for (const folder of folders) {
    const source = path.resolve(folder);
    if (seen.has(source)) continue;
    seen.add(source);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(source, { withFileTypes: true });
    } catch (err) {
      problems.push(`${source}: skills folder cannot be read (${errorCode(err)})`);
      continue;
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const dir = path.join(source, entry.name);
      if (entry.name.startsWith('.') || !isDirectory(dir)) continue;
      const file = path.join(dir, 'SKILL.md');
      if (!fs.existsSync(file)) continue;
      const parsed = readSkillFile(file);
      if ('problem' in parsed) {
        problems.push(`${file}: ${parsed.problem}; skipped`);
        continue;
      }
      const taken = byName.get(parsed.name);
      if (taken) {
        problems.push(`${file}: duplicate skill name "${parsed.name}" (already defined by ${path.join(taken.folder, 'SKILL.md')}); skipped`);
        continue;
      }
      const skill: Skill = { ...parsed, folder: fs.realpathSync(dir), source, scripts: listFiles(dir) };
      byName.set(skill.name, skill);
      skills.push(skill);
    }
  }
  return { skills, problems };
}

/** Front matter and body of one SKILL.md text, or the reason it is not a valid skill. */
export function parseSkill(text: string): { name: string; description: string; body: string } | { problem: string } {
  const match = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/.exec(text);
  if (!match) return { problem: 'no YAML front matter (the file must start with a "---" line and close it with another "---" line)' };
  let meta: unknown;
  try {
    // logLevel error: the parser's warnings (an unknown tag) would print the offending line to the log.
    meta = parseYaml(match[1]!, { logLevel: 'error' });
  } catch (err) {
    return { problem: `front matter is not valid YAML (${yamlProblem(err)})` };
  }
  if (!meta || typeof meta !== 'object' || Array.isArray(meta)) return { problem: 'front matter must be a YAML mapping with name and description' };
  const { name, description } = meta as Record<string, unknown>;
  if (name === undefined || name === null || name === '') return { problem: 'front matter has no name' };
  if (typeof name !== 'string' || !SKILL_NAME.test(name) || name.length > MAX_NAME_LENGTH) {
    return { problem: `invalid name ${JSON.stringify(name)}: use lower-case letters, digits, "-" and "_" (${SKILL_NAME}, at most ${MAX_NAME_LENGTH} characters)` };
  }
  if (typeof description !== 'string' || !description.trim()) return { problem: 'front matter has no description' };
  const desc = description.trim().replace(/\s+/g, ' ');
  if (desc.length > MAX_DESCRIPTION_LENGTH) return { problem: `description is longer than ${MAX_DESCRIPTION_LENGTH} characters` };
  return { name, description: desc, body: match[2]!.trim() };
}

function readSkillFile(file: string): ReturnType<typeof parseSkill> {
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_SKILL_FILE_BYTES) return { problem: `SKILL.md is ${size} bytes, more than ${MAX_SKILL_FILE_BYTES}` };
    return parseSkill(fs.readFileSync(file, 'utf8'));
  } catch (err) {
    return { problem: `cannot be read (${errorCode(err)})` };
  }
}

/** Files under a skill folder, relative, sorted; hidden files and caches left out. */
function listFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= MAX_LISTED_FILES) return;
      if (e.name.startsWith('.') || IGNORED.has(e.name) || e.name.endsWith('.pyc')) continue;
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (depth < MAX_LIST_DEPTH) walk(full, depth + 1);
      } else if (e.isFile()) {
        out.push(path.relative(root, full).split(path.sep).join('/'));
      }
    }
  };
  walk(root, 0);
  return out;
}

function isDirectory(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function errorCode(err: unknown): string {
  return (err as { code?: string }).code ?? firstLine(err);
}

/**
 * What is wrong with the front matter and where, in SKILL.md's lines, without any of its text:
 * the parser's message quotes the offending line (and an alias error names the alias).
 */
function yamlProblem(err: unknown): string {
  const { code, linePos } = err as { code?: unknown; linePos?: { line: number; col: number }[] };
  const what = typeof code === 'string' ? code.toLowerCase().replace(/_/g, ' ') : 'unreadable';
  const at = linePos?.[0];
  // The front matter starts on the file's second line, after "---".
  return at ? `${what} at line ${at.line + 1}, column ${at.col}` : what;
}

function firstLine(err: unknown): string {
  return String((err as { message?: unknown }).message ?? err).split('\n')[0]!;
}
