/**
 * Drives a turn to an end from the CLI: waits, answers questions inline in a terminal,
 * or reports the pending question and exits 3 when nobody is there to answer.
 */
import { createInterface } from 'node:readline/promises';
import type { Client } from '@temporalio/client';
import { answerQuestion, waitForTurn } from '../lib/session-client';
import { EXIT, printJson, printTurn, say, turnExitCode, turnJson, waitingJson } from './output';

/** Options shared by run, chat and answer. */
export interface DriveOptions {
  json: boolean;
  who: string;
  /** Asks a person; absent when nobody is at a terminal (the turn is left waiting, exit 3). */
  ask?: (question: string) => Promise<string>;
}

/** Waits for the turn; returns the process exit code. */
export async function driveTurn(client: Client, sessionId: string, turnId: string, o: DriveOptions): Promise<number> {
  let current = turnId;
  for (;;) {
    const out = await waitForTurn(client, current, {
      onStep: (step) => {
        if (o.ask && !o.json) say(`… step ${step}`);
      },
    });
    if (out.kind === 'done') {
      if (o.json) printJson(turnJson(out.result));
      else printTurn(out.result);
      return turnExitCode(out.result);
    }
    const question = out.state.pending?.question ?? '';
    if (!o.ask) {
      if (o.json) printJson(waitingJson(sessionId, out.state));
      else {
        process.stdout.write(`${question}\n`);
        say(`[${current}] waiting for an answer; the session keeps waiting.`);
      }
      say(`answer with: harness answer ${sessionId} "<your answer>"`);
      return EXIT.waiting;
    }
    const text = await o.ask(question);
    current = await answerQuestion(client, sessionId, text, o.who);
  }
}

/** Asks one line on the terminal; an empty line asks again. */
export async function askOnTerminal(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    for (;;) {
      const line = (await rl.question(`? ${question}\n> `)).trim();
      if (line) return line;
    }
  } finally {
    rl.close();
  }
}

/** True when both ends are a terminal (and the caller did not ask for JSON). */
export function isInteractive(json: boolean): boolean {
  return !json && Boolean(process.stdin.isTTY && process.stdout.isTTY);
}
