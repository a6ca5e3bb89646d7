/**
 * Two custom tools for sub-agent tests: `look_fact` (read-only) and `file_note` (a write, so
 * the default policy asks for it). `runs` lists each real run, to show what ran once.
 */
import { z } from 'zod';
import { defineTool } from '../../api/define-tool';

export function factTools() {
  const runs: string[] = [];
  const lookup = defineTool({
    name: 'look_fact',
    description: 'Look a fact up by its topic.',
    schema: z.object({ topic: z.string() }),
    risk: 'read_only',
    run: ({ topic }) => {
      runs.push(`look_fact ${topic}`);
      return { fact: `${topic} is 42` };
    },
  });
  const file = defineTool({
    name: 'file_note',
    description: 'File a note in the archive.',
    schema: z.object({ note: z.string() }),
    risk: 'write',
    run: ({ note }) => {
      runs.push(`file_note ${note}`);
      return { filed: note };
    },
  });
  return { runs, lookup, file };
}
