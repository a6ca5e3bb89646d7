import { describe, expect, it } from 'vitest';
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import { countEach, countText, countTokens, PER_MESSAGE_OVERHEAD, REPLY_PRIMING, tokenizerFor, WORD_SLICE } from '../../../activities/compress/tokens';
import type { ChatMessage } from '../../../deterministic/types';
import { tsSource } from '../../../bench/fixtures/conversations';

describe('token counting', () => {
  it('maps OpenAI model families to their real encodings and others to an estimate', () => {
    expect(tokenizerFor('gpt-4o-mini')).toBe('o200k_base');
    expect(tokenizerFor('openai/gpt-5')).toBe('o200k_base');
    expect(tokenizerFor('o3-mini')).toBe('o200k_base');
    expect(tokenizerFor('gpt-4-turbo')).toBe('cl100k_base');
    expect(tokenizerFor('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(tokenizerFor('deepseek-chat')).toBe('cl100k_base');
    expect(tokenizerFor('scripted')).toBe('estimate');
    expect(tokenizerFor('some-local-model')).toBe('estimate');
  });

  it('counts real BPE tokens, which differ from the character estimate', () => {
    expect(countText('hello world', 'o200k_base')).toBe(2);
    expect(countText('hello world', 'estimate')).toBe(3);
    const code = tsSource('x.ts', 5_000, 9);
    expect(countText(code, 'o200k_base')).not.toBe(Math.ceil(code.length / 4));
    // Special-token text in a tool result is plain text, not an error.
    expect(countText('<|endoftext|>', 'cl100k_base')).toBeGreaterThan(1);
  });

  it('counts a hostile 256 KiB word in slices (the tokenizer is quadratic on one word) and ordinary text exactly', () => {
    let seed = 7;
    const letter = () => String.fromCharCode(97 + ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 26));
    const word = Array.from({ length: 256 * 1024 }, letter).join('');
    const text = `before ${word} after`;
    let sliced = countText('before ', 'o200k_base') + countText(' after', 'o200k_base');
    for (let i = 0; i < word.length; i += WORD_SLICE) sliced += countText(word.slice(i, i + WORD_SLICE), 'o200k_base');
    expect(countText(text, 'o200k_base')).toBe(sliced);
    // Words shorter than the slicing threshold are counted as one text, as the tokenizer counts them.
    const prose = tsSource('y.ts', 20_000, 3);
    expect(countText(prose, 'cl100k_base')).toBe(cl100k.countTokens(prose, { disallowedSpecial: new Set() }));
  });

  it('adds per-message overhead, tool calls and reply priming', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'hello world' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' }] },
    ];
    const { counts, total } = countEach(messages, 'gpt-4o');
    expect(counts[0]).toBe(PER_MESSAGE_OVERHEAD + 2);
    expect(counts[1]).toBeGreaterThan(PER_MESSAGE_OVERHEAD + 8);
    expect(total).toBe(REPLY_PRIMING + counts[0] + counts[1]);
    expect(countTokens(messages, 'gpt-4o')).toBe(total);
    expect(countTokens([], 'unknown')).toBe(REPLY_PRIMING);
  });
});
