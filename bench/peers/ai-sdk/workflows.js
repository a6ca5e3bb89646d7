// The peer's turn: the AI SDK's own agent loop (generateText with a step limit) inside a
// workflow, the model behind @temporalio/ai-sdk's invokeModel activity, the tool a local
// activity as the harness runs get_current_time. Deterministic: no I/O here.
const { generateText, stepCountIs, tool } = require('ai');
const { z } = require('zod');
const { TemporalProvider } = require('@temporalio/ai-sdk/workflow');
const { proxyLocalActivities } = require('@temporalio/workflow');

const { currentTime } = proxyLocalActivities({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });
const provider = new TemporalProvider({ languageModel: { startToCloseTimeout: '1 minute', retry: { maximumAttempts: 3 } } });

async function peerTurn({ sessionId, steps }) {
  const result = await generateText({
    model: provider.languageModel('scripted'),
    system: 'bench',
    prompt: 'go',
    // The scripted model plays the session's script step by step.
    headers: { 'x-harness-session': sessionId },
    tools: {
      get_current_time: tool({
        description: 'The current time in a timezone',
        inputSchema: z.object({ timezone: z.string() }),
        execute: ({ timezone }) => currentTime(timezone),
      }),
    },
    stopWhen: stepCountIs(steps),
  });
  return { steps: result.steps.length, text: result.text };
}

module.exports = { peerTurn };
