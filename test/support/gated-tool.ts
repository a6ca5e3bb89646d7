/**
 * A read-only custom tool, `gather_facts`, whose every call waits until the test lets it end:
 * a (sub-agent's) turn stays at that step meanwhile. `waiting` holds one opener per call
 * reached, in order.
 */
import { z } from 'zod';
import { defineTool } from '../../api/define-tool';

export function gatedFactsTool() {
  const waiting: Array<() => void> = [];
  const tool = defineTool({
    name: 'gather_facts',
    description: 'Gather facts.',
    schema: z.object({ topic: z.string() }),
    risk: 'read_only',
    run: async ({ topic }) => {
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { facts: `facts on ${topic}` };
    },
  });
  return { tool, waiting };
}
