/** Deterministic fixtures for compression tests: realistic sources and random conversations. */
import type { ChatMessage, ToolCall } from '../../../common/types';

/** mulberry32: a small seeded PRNG so "random" cases are reproducible. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NOUNS = ['Order', 'Invoice', 'Customer', 'Ledger', 'Session', 'Cache', 'Route', 'Queue', 'Metric', 'Token', 'Report', 'Shipment'];

/** A TypeScript-like module of about `size` characters with imports, interfaces, classes and functions. */
export function tsSource(name: string, size: number, seed: number): string {
  const r = rng(seed);
  const pick = () => NOUNS[Math.floor(r() * NOUNS.length)];
  const out = [
    `// ${name}: domain services for the ${pick().toLowerCase()} pipeline.`,
    `import { EventEmitter } from 'node:events';`,
    `import type { ${pick()}Repository, ${pick()}Dto } from './repositories';`,
    `import { logger } from '../lib/logger';`,
    '',
  ];
  for (let i = 0; out.join('\n').length < size; i++) {
    const n = `${pick()}${i}`;
    out.push(
      `export interface ${n}Options {`, `  id: string;`, `  retries: number;`, `  timeoutMs?: number;`, `}`, '',
      `export class ${n}Service extends EventEmitter {`,
      `  private readonly cache = new Map<string, ${n}Options>();`,
      `  constructor(private readonly repo: ${pick()}Repository) {`, `    super();`, `  }`, '',
      `  async load(id: string): Promise<${n}Options | undefined> {`,
      `    const hit = this.cache.get(id);`, `    if (hit) return hit;`,
      `    const row = await this.repo.find(id);`, `    logger.debug('loaded ${n}', { id, found: Boolean(row) });`,
      `    return row ? { id, retries: ${Math.floor(r() * 9)}, timeoutMs: ${1000 + Math.floor(r() * 9000)} } : undefined;`, `  }`, '',
      `  summarize(items: ${n}Options[]): string {`, `    return items.map((x) => \`\${x.id}:\${x.retries}\`).join(',');`, `  }`, `}`, '',
      `export function normalize${n}(input: Partial<${n}Options>): ${n}Options {`,
      `  return { id: input.id ?? 'unknown', retries: Math.max(0, input.retries ?? 3), timeoutMs: input.timeoutMs };`, `}`, '',
    );
  }
  return out.join('\n');
}

/** A Python-like module of about `size` characters with imports, classes, defs and docstrings. */
export function pySource(name: string, size: number, seed: number): string {
  const r = rng(seed);
  const pick = () => NOUNS[Math.floor(r() * NOUNS.length)];
  const out = [`"""${name}: batch jobs that reconcile ${pick().toLowerCase()} records."""`, 'import json', 'import logging', 'from dataclasses import dataclass', 'from typing import Iterable, Optional', '', 'log = logging.getLogger(__name__)', ''];
  for (let i = 0; out.join('\n').length < size; i++) {
    const n = `${pick()}${i}`;
    out.push(
      '@dataclass', `class ${n}Record:`, `    """One ${n.toLowerCase()} row as stored in the warehouse."""`, '    key: str', '    amount: float', '    note: Optional[str] = None', '',
      `    def to_json(self) -> str:`, `        return json.dumps({"key": self.key, "amount": self.amount, "note": self.note})`, '',
      `class ${n}Job:`, `    def __init__(self, batch_size: int = ${10 + Math.floor(r() * 90)}):`, '        self.batch_size = batch_size', '        self.errors: list[str] = []', '',
      `    def run(self, rows: Iterable[${n}Record]) -> int:`, '        done = 0', '        for row in rows:', '            try:', '                log.info("row %s", row.to_json())', '                done += 1',
      '            except ValueError as exc:', '                self.errors.append(str(exc))', '        return done', '',
      `def load_${n.toLowerCase()}(path: str) -> list[${n}Record]:`, `    with open(path) as fh:`, `        return [${n}Record(**json.loads(line)) for line in fh]`, '',
    );
  }
  return out.join('\n');
}

/** A read_file tool message body as the harness produces it. */
export function readFileResult(path: string, content: string): string {
  return JSON.stringify({ ok: true, result: { path, content, bytes: content.length, truncated: false } });
}

export const ARCH_GOAL = 'Explain the architecture of the project in src/ (files a.ts, b.py, c.ts)';
export const ARCH_PATHS = ['src/a.ts', 'src/b.py', 'src/c.ts'];

/** The seed's architecture case: list src/, then read three large files (~60,000 characters together). */
export function architectureCase(): ChatMessage[] {
  const sources = [tsSource('a.ts', 20_000, 1), pySource('b.py', 20_000, 2), tsSource('c.ts', 20_000, 3)];
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a careful coding agent. Use the tools to inspect the workspace before answering.' },
    { role: 'user', content: ARCH_GOAL },
    { role: 'assistant', content: 'Let me look at the folder first.', tool_calls: [call('call_0', 'list_files', { path: 'src' })] },
    { role: 'tool', tool_call_id: 'call_0', content: JSON.stringify({ ok: true, result: { entries: ARCH_PATHS.map((p) => ({ path: p, type: 'file' })) } }) },
  ];
  ARCH_PATHS.forEach((path, i) => {
    messages.push({ role: 'assistant', content: null, tool_calls: [call(`call_${i + 1}`, 'read_file', { path })] });
    messages.push({ role: 'tool', tool_call_id: `call_${i + 1}`, content: readFileResult(path, sources[i]) });
  });
  return messages;
}

export function call(id: string, name: string, args: Record<string, unknown>): ToolCall {
  return { id, name, arguments: JSON.stringify(args) };
}

/** A random but well-formed conversation: system, goal, then steps of tool calls, results and chatter. */
export function randomConversation(r: () => number): ChatMessage[] {
  const text = (n: number) => {
    const words = ['alpha', 'src/x.ts', '42', 'error', 'retry', 'FILE_NOT_FOUND', 'def run():', 'import os', '# Title', 'class A {'];
    const out: string[] = [];
    for (let len = 0; len < n; ) {
      const w = words[Math.floor(r() * words.length)];
      out.push(w);
      len += w.length + 1;
    }
    return out.join(r() < 0.3 ? '\n' : ' ');
  };
  const size = () => Math.floor(r() ** 3 * 12_000);
  const messages: ChatMessage[] = [{ role: 'system', content: text(50 + size() / 20) }, { role: 'user', content: `GOAL ${text(20 + size() / 40)}` }];
  const steps = Math.floor(r() * 14);
  let id = 0;
  for (let s = 0; s < steps; s++) {
    const kind = r();
    if (kind < 0.15) messages.push({ role: 'user', content: text(size() / 4) });
    else if (kind < 0.3) messages.push({ role: 'assistant', content: text(size() / 4) });
    else {
      const calls = Array.from({ length: 1 + Math.floor(r() * 3) }, () => call(`c${id++}`, r() < 0.5 ? 'read_file' : 'run_shell', { path: `src/f${id}.ts`, command: 'ls' }));
      messages.push({ role: 'assistant', content: r() < 0.5 ? null : text(40), tool_calls: calls });
      for (const c of calls) messages.push({ role: 'tool', tool_call_id: c.id, content: r() < 0.5 ? readFileResult(`src/f${c.id}.ts`, text(size())) : text(size()) });
    }
  }
  return messages;
}
