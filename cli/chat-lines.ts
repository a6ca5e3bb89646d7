/**
 * The lines a person types into `harness chat`, each given to whoever wants it: a prompt that
 * waits (the next message, a question, an approval), else, while a turn runs at a terminal, the
 * chat's steering (`onFree`: the line goes to the running turn), else kept for the next prompt.
 * One reader pulls the lines, so a line is never taken twice nor lost between two readers. After a
 * read that was aborted (someone decided elsewhere while the person typed), the next line nobody
 * waits for is kept for the next prompt, not sent to the turn: it was typed as an answer.
 */
export class ChatLines {
  private readonly waiters: Array<{ resolve: (line: string | undefined) => void }> = [];
  private readonly kept: Array<string | undefined> = [];
  private ended = false;
  private answerTyped = false;
  /** While set, a line nobody waits for goes here (a turn runs and a person types). */
  onFree?: (line: string) => void;

  constructor(lines: AsyncIterable<string>) {
    void this.pump(lines);
  }

  /** The next line (trimmed); undefined once the input ended. Rejects with the signal's reason if it aborts first. */
  next(signal?: AbortSignal): Promise<string | undefined> {
    if (this.kept.length) return Promise.resolve(this.kept.shift());
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const waiter = { resolve: (line: string | undefined) => (signal?.removeEventListener('abort', onAbort), resolve(line)) };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i !== -1) this.waiters.splice(i, 1);
        this.answerTyped = true;
        reject(signal!.reason);
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private async pump(lines: AsyncIterable<string>): Promise<void> {
    try {
      for await (const raw of lines) this.give(String(raw).trim());
    } finally {
      this.ended = true;
      for (const w of this.waiters.splice(0)) w.resolve(undefined);
    }
  }

  private give(line: string): void {
    const waiter = this.waiters.shift();
    const typedAsAnswer = this.answerTyped;
    this.answerTyped = false;
    if (waiter) waiter.resolve(line);
    else if (this.onFree && line && !typedAsAnswer) this.onFree(line);
    else this.kept.push(line);
  }
}
