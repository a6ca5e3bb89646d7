/**
 * Drives a turn to an end from the CLI: waits, asks questions and approvals inline in a
 * terminal, or reports what is pending and exits 3 when nobody is there to decide.
 */
import { createInterface } from 'node:readline/promises';
import type { Client } from '@temporalio/client';
import type { PendingApproval } from '../common/session';
import { answerQuestion, decideApprovals, waitForTurn } from '../lib/session-client';
import { escapeForTerminal } from './escape';
import { approvalLine, EXIT, printJson, printTurn, say, turnExitCode, turnJson, waitingJson } from './output';

/** A person's verdict on one call. */
export type Verdict = 'yes' | 'no' | 'always';

/** How to reach the person at the terminal; absent when nobody is there. */
export interface Prompter {
  ask(question: string): Promise<string>;
  approve(call: PendingApproval): Promise<Verdict>;
}

/** Options shared by run, chat, answer, approve and deny. */
export interface DriveOptions {
  json: boolean;
  prompter?: Prompter;
}

/** Waits for the turn; returns the process exit code. */
export async function driveTurn(client: Client, sessionId: string, turnId: string, o: DriveOptions): Promise<number> {
  for (;;) {
    const out = await waitForTurn(client, turnId, {
      onStep: (step) => {
        if (o.prompter && !o.json) say(`… step ${step}`);
      },
    });
    if (out.kind === 'done') {
      if (o.json) printJson(turnJson(out.result));
      else printTurn(out.result);
      return turnExitCode(out.result);
    }
    const pending = out.state.pending!;
    if (!o.prompter) {
      if (o.json) printJson(waitingJson(sessionId, out.state));
      if (pending.kind === 'question') {
        if (!o.json) process.stdout.write(`${escapeForTerminal(pending.question, { keepNewlines: true })}\n`);
        say(`[${turnId}] waiting for an answer; the session keeps waiting.`);
        say(`answer with: harness answer ${sessionId} "<your answer>"`);
      } else {
        say(`[${turnId}] waiting for approval; the session keeps waiting.`);
        for (const c of pending.calls) {
          say(`  ${approvalLine(c)}`);
          say(`    approve: harness approve ${sessionId} ${c.callId}    deny: harness deny ${sessionId} ${c.callId} --reason "<why>"`);
        }
      }
      return EXIT.waiting;
    }
    if (pending.kind === 'question') {
      await answerQuestion(client, sessionId, await o.prompter.ask(pending.question));
      continue;
    }
    for (const call of pending.calls) {
      const verdict = await o.prompter.approve(call);
      // Exactly the call shown: its digest makes the turn refuse anything else.
      await decideApprovals(client, sessionId, {
        calls: [{ callId: call.callId, digest: call.digest ?? '' }],
        approve: verdict !== 'no',
        ...(verdict === 'always' ? { always: true } : {}),
        ...(verdict === 'no' ? { reason: 'denied at the terminal' } : {}),
      });
    }
  }
}

/** After a human decision: return at once (`--no-wait`) or wait for the turn like `run`. */
export async function followTurn(
  client: Client,
  sessionId: string,
  turnId: string,
  o: { json?: boolean; wait: boolean },
  status: string,
): Promise<number> {
  if (o.wait) return driveTurn(client, sessionId, turnId, { json: Boolean(o.json) });
  if (o.json) printJson({ session_id: sessionId, workflow_id: turnId, status });
  else say(`${status}; the turn ${turnId} goes on`);
  return EXIT.ok;
}

/** Reads answers from a line source (the terminal, or chat's own reader). */
export function linePrompter(readLine: (prompt: string) => Promise<string | undefined>, onEnd: () => never): Prompter {
  const line = async (prompt: string): Promise<string> => {
    for (;;) {
      const text = await readLine(prompt);
      if (text === undefined) return onEnd();
      if (text.trim()) return text.trim();
    }
  };
  return {
    ask: (question) => line(`? ${escapeForTerminal(question, { keepNewlines: true })}\n> `),
    async approve(call) {
      for (;;) {
        const a = (await line(`approve ${approvalLine(call)}\n  [y]es / [n]o / [a]lways for this session > `)).toLowerCase();
        if (['y', 'yes'].includes(a)) return 'yes';
        if (['n', 'no'].includes(a)) return 'no';
        if (['a', 'always'].includes(a)) return 'always';
      }
    },
  };
}

/** A prompter on the process terminal, or undefined when stdin/stdout are not a TTY (or JSON was asked). */
export function terminalPrompter(json: boolean): Prompter | undefined {
  if (json || !(process.stdin.isTTY && process.stdout.isTTY)) return undefined;
  return linePrompter(
    async (prompt) => {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(prompt);
      } finally {
        rl.close();
      }
    },
    () => {
      throw new Error('input ended');
    },
  );
}
