// The peer's baseline: the same turn through the AI SDK without Temporal, against the same
// scripted model. node in-process.js <model base URL> <steps> <session>... prints, as JSON, the
// milliseconds between one model request's start and the next, and each turn's time per step.
const { generateText, stepCountIs, tool } = require('ai');
const { z } = require('zod');
const { createOpenAICompatible } = require('@ai-sdk/openai-compatible');
const { currentTime } = require('./activities');

async function main() {
  const [baseURL, stepsArg, ...sessions] = process.argv.slice(2);
  const steps = Number(stepsArg);
  let starts = [];
  const model = createOpenAICompatible({
    name: 'scripted',
    baseURL,
    apiKey: 'bench',
    fetch: (url, init) => {
      starts.push(performance.now());
      return fetch(url, init);
    },
  })('scripted');
  const out = { steps: [], perTurnMs: [] };
  for (const sessionId of sessions) {
    starts = [];
    const t0 = performance.now();
    const result = await generateText({
      model,
      system: 'bench',
      prompt: 'go',
      headers: { 'x-harness-session': sessionId },
      tools: { get_current_time: tool({ description: 'The current time in a timezone', inputSchema: z.object({ timezone: z.string() }), execute: async ({ timezone }) => currentTime(timezone) }) },
      stopWhen: stepCountIs(steps),
    });
    if (result.steps.length !== steps) throw new Error(`in-process peer turn ran ${result.steps.length} steps, not ${steps}`);
    out.perTurnMs.push((performance.now() - t0) / steps);
    for (let i = 1; i < starts.length; i++) out.steps.push(starts[i] - starts[i - 1]);
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exit(1);
});
