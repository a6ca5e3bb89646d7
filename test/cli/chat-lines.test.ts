/**
 * The chat's line router: a line goes to the prompt that waits for it, else (a turn running at a
 * terminal) to the turn, else to the next prompt; an aborted prompt gives its place back, and the
 * line typed for it is kept for the next prompt rather than sent to the turn; the end of input
 * ends every waiting prompt.
 */
import { describe, expect, it } from 'vitest';
import { ChatLines } from '../../cli/chat-lines';

/** Lines the test types one at a time. */
function typed() {
  const queue: Array<(r: IteratorResult<string>) => void> = [];
  const ready: Array<IteratorResult<string>> = [];
  const iterable: AsyncIterable<string> = {
    [Symbol.asyncIterator]: () => ({ next: () => (ready.length ? Promise.resolve(ready.shift()!) : new Promise((r) => queue.push(r))) }),
  };
  const push = (r: IteratorResult<string>) => (queue.length ? queue.shift()!(r) : ready.push(r));
  return { iterable, type: (line: string) => push({ value: line, done: false }), end: () => push({ value: undefined, done: true }) };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('ChatLines', () => {
  it('gives a line to the waiting prompt, else to the running turn, else keeps it', async () => {
    const input = typed();
    const lines = new ChatLines(input.iterable);
    const first = lines.next();
    input.type('  hello  ');
    expect(await first).toBe('hello');

    const steered: string[] = [];
    lines.onFree = (l) => steered.push(l);
    input.type('also run the linter');
    await tick();
    expect(steered).toEqual(['also run the linter']);
    // A question of the turn waits: its answer is not a steer.
    const answer = lines.next();
    input.type('main');
    expect(await answer).toBe('main');
    expect(steered).toEqual(['also run the linter']);

    lines.onFree = undefined;
    input.type('next message');
    input.type('');
    await tick();
    expect(await lines.next()).toBe('next message');
    expect(await lines.next()).toBe('');
  });

  it('keeps the line typed for a prompt that was aborted for the next prompt, never the turn', async () => {
    const input = typed();
    const lines = new ChatLines(input.iterable);
    const steered: string[] = [];
    lines.onFree = (l) => steered.push(l);
    const stop = new AbortController();
    const asked = lines.next(stop.signal);
    stop.abort(new Error('decided elsewhere'));
    await expect(asked).rejects.toThrow('decided elsewhere');
    input.type('y');
    await tick();
    expect(steered).toEqual([]);
    expect(await lines.next()).toBe('y');
    // Only that one line: the next goes to the turn again.
    input.type('and then this');
    await tick();
    expect(steered).toEqual(['and then this']);
  });

  it('ends every waiting prompt when the input ends, and answers later reads with the end', async () => {
    const input = typed();
    const lines = new ChatLines(input.iterable);
    const waiting = lines.next();
    input.end();
    expect(await waiting).toBeUndefined();
    expect(await lines.next()).toBeUndefined();
  });
});
