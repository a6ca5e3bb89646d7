/**
 * Shrinks a disagreeing command to a shorter one with the same disagreement (same signature),
 * so a report shows `sed -n ':x w o' f` rather than a 300-character mutant. Greedy deletion:
 * every way to drop one word, then one character, is decided by the policy (cheap); the ones it
 * still allows are traced in one batch, and the shortest that still disagrees the same way wins.
 */
import { compare, judgeAsNewSession, signature, type Disagreement } from './judge';
import type { Tracer } from './tracer';

const PER_ROUND = 150;

export async function minimize(tracer: Tracer, d: Disagreement, rounds = 20): Promise<Disagreement> {
  const key = signature(d);
  let best = d;
  for (let r = 0; r < rounds; r++) {
    const next = (await shrink(tracer, best, key, wordCuts(best.command))) ?? (await shrink(tracer, best, key, charCuts(best.command)));
    if (!next) break;
    best = next;
  }
  return best;
}

async function shrink(tracer: Tracer, d: Disagreement, key: string, candidates: string[]): Promise<Disagreement | undefined> {
  const allowed = [...new Set(candidates)]
    .filter((c) => c.trim() && c.length < d.command.length)
    .sort((a, b) => a.length - b.length)
    .map((c) => [c, judgeAsNewSession(c)] as const)
    .filter(([, decision]) => decision.decision === 'allow')
    .slice(0, PER_ROUND);
  if (!allowed.length) return undefined;
  const results = await tracer.trace(allowed.map(([c]) => c));
  for (let i = 0; i < allowed.length; i++) {
    const got = compare(allowed[i]![1], results[i]!);
    if (got && signature(got) === key) return got;
  }
  return undefined;
}

/** The command without one of its whitespace-separated words (or runs of two and four). */
function wordCuts(command: string): string[] {
  const parts = command.split(/(\s+)/);
  const out: string[] = [];
  for (const span of [4, 2, 1]) {
    for (let i = 0; i < parts.length; i += 2) {
      out.push([...parts.slice(0, i), ...parts.slice(i + span * 2)].join('').trim());
    }
  }
  return out;
}

/** The command without one character. */
function charCuts(command: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < command.length; i++) out.push(command.slice(0, i) + command.slice(i + 1));
  return out;
}
