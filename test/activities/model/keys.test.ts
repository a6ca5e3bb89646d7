import { describe, expect, it } from 'vitest';
import { keyForEndpoint } from '../../../activities/model/keys';

const env = { OPENAI_API_KEY: 'sk-openai', DEEPSEEK_API_KEY: 'sk-deepseek' };

describe('keyForEndpoint', () => {
  it("sends OPENAI_API_KEY to OpenAI's own host only", () => {
    expect(keyForEndpoint(undefined, env)).toEqual({ apiKey: 'sk-openai', host: 'api.openai.com' });
    expect(keyForEndpoint('https://api.openai.com/v1', env)).toMatchObject({ apiKey: 'sk-openai' });
    expect(keyForEndpoint('https://evil.example.com/v1', env)).toMatchObject({ problem: expect.stringMatching(/no API key is bound to evil\.example\.com/) });
    expect(keyForEndpoint('https://api.openai.com.evil.io/v1', env)).toHaveProperty('problem');
  });

  it("sends DeepSeek's key to api.deepseek.com matched exactly, never by substring", () => {
    expect(keyForEndpoint('https://api.deepseek.com', env)).toMatchObject({ apiKey: 'sk-deepseek' });
    expect(keyForEndpoint('https://api.deepseek.com.attacker.net/v1', env)).toHaveProperty('problem');
    expect(keyForEndpoint('https://deepseek.attacker.net/v1', env)).toHaveProperty('problem');
    // Without its own key, DeepSeek gets OPENAI_API_KEY only when the worker itself points there.
    expect(keyForEndpoint('https://api.deepseek.com', { OPENAI_API_KEY: 'sk-openai' })).toHaveProperty('problem');
    expect(keyForEndpoint('https://api.deepseek.com', { OPENAI_API_KEY: 'sk-openai', OPENAI_BASE_URL: 'https://api.deepseek.com' })).toMatchObject({ apiKey: 'sk-openai' });
  });

  it("binds OPENAI_API_KEY to the host of the worker's own OPENAI_BASE_URL, and others through HARNESS_MODEL_KEYS", () => {
    const own = { ...env, OPENAI_BASE_URL: 'https://llm.internal.example:8443/v1' };
    expect(keyForEndpoint('https://llm.internal.example:8443/v1', own)).toMatchObject({ apiKey: 'sk-openai' });
    expect(keyForEndpoint('https://llm.internal.example/v1', own)).toHaveProperty('problem');
    const mapped = { ...env, HARNESS_MODEL_KEYS: 'openrouter.ai=OPENROUTER_KEY', OPENROUTER_KEY: 'sk-or' };
    expect(keyForEndpoint('https://openrouter.ai/api/v1', mapped)).toMatchObject({ apiKey: 'sk-or' });
    expect(keyForEndpoint('https://openrouter.ai/api/v1', { HARNESS_MODEL_KEYS: 'openrouter.ai=OPENROUTER_KEY' })).toMatchObject({
      problem: expect.stringMatching(/OPENROUTER_KEY is not set/),
    });
  });

  it('gives a local endpoint no key unless one is bound to it, and never sends a key over plain http to a remote host', () => {
    expect(keyForEndpoint('http://127.0.0.1:8000/v1', env)).toEqual({ apiKey: 'none', host: '127.0.0.1:8000' });
    expect(keyForEndpoint('http://localhost:11434/v1', env)).toMatchObject({ apiKey: 'none' });
    expect(keyForEndpoint('http://[::1]:9/v1', env)).toMatchObject({ apiKey: 'none' });
    expect(keyForEndpoint('http://127.0.0.1:8000/v1', { ...env, HARNESS_MODEL_KEYS: '127.0.0.1:8000=LOCAL_KEY', LOCAL_KEY: 'k' })).toMatchObject({ apiKey: 'k' });
    expect(keyForEndpoint('http://api.openai.com/v1', env)).toMatchObject({ problem: expect.stringMatching(/plain http/) });
  });
});
