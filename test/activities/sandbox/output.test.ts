import { describe, expect, it } from 'vitest';
import { OutputCapture } from '../../../activities/sandbox/output';

function capture(max: number, ...chunks: string[]): OutputCapture {
  const c = new OutputCapture(max);
  for (const chunk of chunks) c.push(Buffer.from(chunk));
  return c;
}

describe('OutputCapture', () => {
  it('keeps everything when the output fits', () => {
    const c = capture(10, 'abc', 'defghij');
    expect(c.text()).toBe('abcdefghij');
    expect(c.truncated).toBe(false);
    expect(c.droppedBytes).toBe(0);
  });

  it('keeps the head and the tail across many chunks and states the dropped bytes', () => {
    const c = capture(10, '12345', 'xxxxx', 'xxxxx', 'xxx', 'abcde');
    expect(c.text()).toBe('12345\n[... 13 bytes dropped ...]\nabcde');
    expect(c.droppedBytes).toBe(13);
    expect(c.total).toBe(23);
  });

  it('never splits a UTF-8 character at either cut', () => {
    const c = capture(6, 'aaé', 'xxxxxxxx', 'éb');
    const text = c.text();
    expect(text).not.toContain('\uFFFD');
    expect(text.startsWith('aa')).toBe(true);
    expect(text.endsWith('b')).toBe(true);
    const dropped = Number(/\[\.\.\. (\d+) bytes dropped/.exec(text)![1]);
    expect(Buffer.byteLength(text.replace(/\n\[\.\.\. \d+ bytes dropped \.\.\.\]\n/, '')) + dropped).toBe(c.total);
  });
});

describe('OutputCapture.skip', () => {
  it('counts skipped middle bytes as dropped, as if they had been pushed', () => {
    const pushed = capture(10, '12345', 'x'.repeat(13), 'abcde');
    const skipped = new OutputCapture(10);
    skipped.push(Buffer.from('12345'));
    skipped.skip(13);
    skipped.push(Buffer.from('abcde'));
    expect(skipped.text()).toBe(pushed.text());
    expect(skipped.droppedBytes).toBe(13);
  });
});
