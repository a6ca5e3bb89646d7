/** Assembles the system message: the session prompt plus working memory. Pure and deterministic. */

/** Builds the system message for one model call. */
export function buildSystemMessage(prompt: string, memory: Record<string, string>): string {
  const parts = [prompt.trim()];
  const keys = Object.keys(memory).sort();
  if (keys.length) {
    parts.push(['## Working memory (facts you saved with `remember`)', ...keys.map((k) => `- ${k}: ${memory[k]}`)].join('\n'));
  }
  return parts.join('\n\n');
}
