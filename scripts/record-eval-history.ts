/**
 * Records a reference history of an eval into test/histories/<label>/: three trials under the
 * default policy (fixtures and an approved write checked on disk, a question answered from the
 * case, a command run in the sandbox, whose trial closes its sandbox), each history the eval
 * made: the eval's, and every trial's workflow and turn. CI replays them with the code of the
 * day (test/histories/replay.test.ts), so a change to how trials run must keep them replaying.
 * Usage: npm run build && node dist/scripts/record-eval-history.js [label]
 */
import { writeHistories } from './history-files';
import { runScript, withScratchHarness } from './scratch';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { parsePolicy } from '../deterministic/policy/schema';
import { freezePolicy } from '../deterministic/policy';
import { followEval, startEval } from '../evals/runner/run';
import { parseSuite } from '../evals/runner/suite';

const cases = [
  {
    id: 'write',
    input: 'Summarise notes.txt into summary.txt.',
    fixtures: { 'notes.txt': 'Ship on Monday.\n' },
    approvals: 'approve',
    model_script: { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'summary.txt', content: 'Monday.\n' } }] }, { content: 'Wrote summary.txt.' }] },
    checks: [{ type: 'file_contains', path: 'summary.txt', value: 'Monday' }],
  },
  {
    id: 'ask',
    input: 'Greet me by name.',
    answers: ['Ada'],
    model_script: { steps: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Your name?' } }] }, { content: 'Hello, Ada.' }] },
    checks: [{ type: 'contains', value: 'Ada' }],
  },
  {
    id: 'shell',
    input: 'Say hi from the shell.',
    approvals: 'approve',
    model_script: { steps: [{ tool_calls: [{ name: 'run_shell', arguments: { command: 'echo hi' } }] }, { content: 'The shell said hi.' }] },
    checks: [{ type: 'tool_called', name: 'run_shell' }],
  },
];

async function main(): Promise<void> {
  const label = process.argv[2] ?? 'eval';
  await withScratchHarness('record-eval', async ({ client, taskQueue, address }) => {
    const config: SessionConfig = {
      model: { provider: 'scripted', model: 'scripted', script: { steps: [] } },
      systemPrompt: 'Reference eval.',
      limits: DEFAULT_LIMITS,
      policy: freezePolicy(parsePolicy({ mode: 'ask' })),
    };
    const suite = parseSuite(cases.map((c) => JSON.stringify(c)).join('\n'), 'reference.jsonl');
    const evalId = `history-${label}`;
    await startEval(client, taskQueue, suite, { concurrency: 2, trials: 1, config, model: 'scripted', scriptedPerCase: true }, evalId);
    const report = await followEval(client, evalId, () => undefined);
    if (report.totals.passed_trials !== cases.length) throw new Error(`every trial should pass: ${JSON.stringify(report.cases)}`);

    // A trial run as a workflow of its own (before the eval ran trials itself) has a history too.
    const trials = cases.map((c) => `${evalId}-${c.id}-t1`);
    await writeHistories(client, address, label, [evalId, ...trials.flatMap((t) => [t, `${t}/turn-1`])]);
  });
}

runScript(main);
