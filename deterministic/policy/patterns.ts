/**
 * The two engines rule patterns are matched with. Policies of version 2 use RE2 (`re2js`, a pure
 * JavaScript port of RE2 without Node built-ins): matching takes time linear in the input, so no
 * pattern, built-in or written by a user, can stall the workflow that decides (Temporal fails a
 * workflow task that runs over 2 s, on every replay). Policies without a version keep the
 * JavaScript engine they were recorded with, so their decisions replay unchanged.
 */
import { RE2JS } from 're2js';

/** How a policy's rules match text: regular expressions (search anywhere) and `*` globs. */
export interface Patterns {
  /** Whether the regular expression matches somewhere in the text. */
  test(pattern: string, text: string): boolean;
  /** Whether the whole name matches a pattern where `*` stands for any characters. */
  glob(pattern: string, name: string): boolean;
}

const jsCache = new Map<string, RegExp>();
const re2Cache = new Map<string, RE2JS>();
// Compiled `*` globs by pattern, so a rule's glob is built once, not on every program matched.
const re2GlobCache = new Map<string, RE2JS>();

/** A compiled JavaScript pattern (cached: rules are matched on every call). */
function jsRegex(source: string): RegExp {
  let compiled = jsCache.get(source);
  if (!compiled) {
    compiled = new RegExp(source);
    jsCache.set(source, compiled);
  }
  return compiled;
}

/** A compiled RE2 pattern (cached); throws on syntax RE2 does not have. */
export function re2Regex(source: string): RE2JS {
  let compiled = re2Cache.get(source);
  if (!compiled) {
    compiled = RE2JS.compile(source);
    re2Cache.set(source, compiled);
  }
  return compiled;
}

/** Whether the source is valid RE2 syntax (no lookaround, no backreferences). */
export function isRe2(source: string): boolean {
  try {
    re2Regex(source);
    return true;
  } catch {
    return false;
  }
}

/** Escapes a string for use inside a regular expression (JavaScript and RE2 alike). */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** The JavaScript engine of policies without a version (backtracking: kept only for replay). */
export const JS_PATTERNS: Patterns = {
  test: (pattern, text) => jsRegex(pattern).test(text),
  glob: (pattern, name) => {
    if (!pattern.includes('*')) return pattern === name;
    return jsRegex(`^${pattern.split('*').map(escapeRegex).join('.*')}$`).test(name);
  },
};

/** The linear-time RE2 engine of version 2 policies. */
export const RE2_PATTERNS: Patterns = {
  test: (pattern, text) => re2Regex(pattern).test(text),
  glob: (pattern, name) => {
    if (pattern === '*') return true;
    if (!pattern.includes('*')) return pattern === name;
    let compiled = re2GlobCache.get(pattern);
    if (!compiled) {
      compiled = re2Regex(`(?s)^${pattern.split('*').map(escapeRegex).join('.*')}$`);
      re2GlobCache.set(pattern, compiled);
    }
    return compiled.test(name);
  },
};
