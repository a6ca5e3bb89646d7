/** Assembles the system message: prompt, skills index, long-term and working memory. Pure and deterministic. */

/** What the turn learned at its start (from prepareTurn, so it is in history). */
export interface TurnContext {
  /** Layer 1 of the skills: names and descriptions. */
  skillsIndex?: string;
  /** The most recent long-term memories of the session's namespace. */
  memories?: string[];
}

/** Builds the system message for one model call. */
export function buildSystemMessage(prompt: string, memory: Record<string, string>, ctx: TurnContext = {}): string {
  const parts = [prompt.trim()];
  if (ctx.skillsIndex) parts.push(ctx.skillsIndex.trim());
  if (ctx.memories?.length) {
    parts.push(['## Long-term memory (most recent; search more with `recall`)', ...ctx.memories.map((m) => `- ${m}`)].join('\n'));
  }
  const keys = Object.keys(memory).sort();
  if (keys.length) {
    parts.push(['## Working memory (facts you saved with `remember`)', ...keys.map((k) => `- ${k}: ${memory[k]}`)].join('\n'));
  }
  return parts.join('\n\n');
}
