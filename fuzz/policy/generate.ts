/**
 * The fuzzer's command list for a seed: the seed corpus itself, then a mix of everyday
 * commands (most of what a strict policy should allow), commands of any shape, and mutants of
 * the seeds. Deterministic: the same seed and count give the same list.
 */
import { plain, wild } from './grammar';
import { loadSeeds, mutant } from './mutate';
import { Rng } from './prng';

/** Shares of each generator (plain, wild, mutant). */
export const MIX = [[45, 'plain'], [30, 'wild'], [25, 'mutant']] as const;

/** `count` distinct commands (fewer only if the generators keep repeating themselves). */
export function generateCommands(seed: number, count: number, seeds: readonly string[] = loadSeeds()): string[] {
  const rng = new Rng(seed);
  const out = new Set<string>(seeds.slice(0, count));
  for (let tries = 0; out.size < count && tries < count * 5; tries++) {
    const kind = rng.weighted(MIX);
    const c = kind === 'plain' ? plain(rng) : kind === 'wild' ? wild(rng) : mutant(rng, seeds);
    if (c.trim()) out.add(c);
  }
  return [...out];
}
