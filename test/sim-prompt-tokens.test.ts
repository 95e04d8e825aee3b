/**
 * Prompt tokenizing off the event loop (issue #17 items 2 and 3): the byte-bounded prompt
 * cache, the lower bound on a prompt's tokens from its length in characters, and the worker
 * threads giving the same ids as the tokenizer on the loop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryBytes, PromptCache } from '../src/sim/http/prompt-cache';
import { minPromptTokens, OffLoopTokenizer, promptOf, requestedOutput } from '../src/sim/http/prompt-tokens';
import { TokenizePool } from '../src/sim/http/tokenize-pool';
import { loadTokenizer, type SimTokenizer } from '../src/sim/http/tokens';

let tok: SimTokenizer;
beforeAll(async () => {
  tok = await loadTokenizer();
}, 60_000);

describe('PromptCache', () => {
  it('holds at most maxBytes (estimated), evicting the least recently used', () => {
    const c = new PromptCache(10_000, 5_000);
    const ids = Array.from({ length: 100 }, (_, i) => i); // 100 ids + 1000 chars ≈ 2900 bytes
    for (let i = 0; i < 20; i++) {
      expect(c.set(`${i}`.padEnd(1000, 'x'), ids)).toBe(true);
      expect(c.bytes).toBeLessThanOrEqual(10_000);
    }
    expect(c.size).toBe(3);
    expect(c.get('19'.padEnd(1000, 'x'))).toBe(ids);
    expect(c.get('0'.padEnd(1000, 'x'))).toBeUndefined();
    expect(c.bytes).toBe(3 * entryBytes('19'.padEnd(1000, 'x'), ids));
  });

  it('never keeps an entry bigger than maxEntryBytes, and re-setting a key does not count it twice', () => {
    const c = new PromptCache(10_000, 5_000);
    expect(c.set('y'.repeat(3000), [1])).toBe(false);
    expect(c.size).toBe(0);
    c.set('a', [1, 2]);
    c.set('a', [1, 2]);
    expect(c.bytes).toBe(entryBytes('a', [1, 2]));
  });
});

describe('minPromptTokens', () => {
  it('uses the longest Qwen token (128 units), so the bound is one token per 1024 characters', () => {
    expect(tok.maxTokenChars).toBe(128);
    expect(minPromptTokens(60_000_000, tok.maxTokenChars)).toBe(58_594);
    expect(minPromptTokens(0, 128)).toBe(0);
  });

  it('is never above the real count, also for the texts that pack most characters into a token', () => {
    const texts = [
      ' '.repeat(128 * 40), // runs of spaces: Qwen's longest tokens
      '='.repeat(20_000),
      'a'.repeat(20_000),
      'hello world, '.repeat(2000),
      '\u03b1\u0313\u0300\u0345'.repeat(3000), // decomposed ᾂ: NFC folds 4 units into 1
      '\u{2f800}'.repeat(3000), // a supplementary compatibility ideograph: NFC maps 2 units to 1
      '你好，世界。'.repeat(3000),
      '<|im_start|><|im_end|>'.repeat(1000),
    ];
    for (const t of texts)
      expect(minPromptTokens(t.length, tok.maxTokenChars), t.slice(0, 12)).toBeLessThanOrEqual(tok.encodePrompt(t).length);
  });
});

describe('prompt text of a request body', () => {
  it('renders chat messages with the template, takes a completion prompt, and leaves the rest to validation', () => {
    expect(promptOf('chat', { messages: [{ role: 'user', content: 'hi' }] })).toContain('<|im_start|>user\nhi<|im_end|>');
    expect(promptOf('completions', { prompt: 'abc' })).toBe('abc');
    expect(promptOf('completions', { prompt: ['abc'] })).toBe('abc');
    expect(promptOf('completions', { prompt: [1, 2] })).toBeUndefined();
    expect(promptOf('chat', { messages: [{ role: 'user', content: 5 }] })).toBeUndefined();
    expect(promptOf('chat', { messages: [null] })).toBeUndefined();
    expect(requestedOutput('chat', { max_completion_tokens: 7, max_tokens: 3 })).toBe(7);
    expect(requestedOutput('completions', { max_tokens: 'x' })).toBe(0);
  });
});

describe('OffLoopTokenizer', () => {
  let off: OffLoopTokenizer;
  beforeAll(() => {
    off = new OffLoopTokenizer(tok);
  });
  afterAll(async () => {
    await off.close();
  });

  it('gives the same ids from the worker as on the loop; caches only prompts that fit', async () => {
    const text = `${Date.now()} ${'The cache keeps prompts. '.repeat(400)}`;
    const ids = await off.encode(text, 100_000);
    expect(ids).toEqual(tok.encodePrompt(`${text}`.slice(0)));
    const tooLong = `${Date.now()} too long ${'word '.repeat(500)}`;
    const before = tok.cache.size;
    const n = (await off.encode(tooLong, 10)).length;
    expect(n).toBeGreaterThan(10);
    expect(tok.cache.get(tooLong)).toBeUndefined();
    expect(tok.cache.size).toBe(before);
  }, 60_000);

  it("the loop's tokenizer, with its build-only data let go, gives the ids of the worker's, which keeps them", async () => {
    const text = `${Date.now()} 请列举 5 个关于人工智能未来发展的关键挑战。 Привет, мир! naïve café — 1234.5 ${'tokenizers merge '.repeat(30)}`;
    expect(text.length).toBeGreaterThan(256); // so the pool's worker encodes it
    const pool = new TokenizePool();
    try {
      const fromWorker = await pool.encode(text);
      expect(tok.cache.get(text)).toBeUndefined(); // the loop encodes it itself below
      expect(tok.encodePrompt(text)).toEqual(fromWorker);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it("a request view knows its prompt; checkLength refuses what the characters already rule out with vLLM's 400", () => {
    const view = off.knowing('known text', [1, 2, 3]);
    expect(view.encodePrompt('known text')).toEqual([1, 2, 3]);
    expect(view.encodeChat([{ role: 'user', content: 'x' }])).toEqual(tok.encodeChat([{ role: 'user', content: 'x' }]));
    expect(() => off.checkLength('x'.repeat(32768 * 1024), 5, 32768)).toThrow(
      "This model's maximum context length is 32768 tokens. However, you requested 5 output tokens and your prompt contains at least 32768 input tokens",
    );
    expect(() => off.checkLength('x'.repeat(32767 * 1024), 5, 32768)).not.toThrow();
  });
});

describe('TokenizePool', () => {
  it("parses JSON in the worker, leaves out strings over the cut, and reports bad JSON with JSON.parse's message", async () => {
    const pool = new TokenizePool();
    try {
      expect(await pool.parseJson(Buffer.from('{"a":[1,"ü"]}'))).toEqual({ value: { a: [1, 'ü'] }, cutChars: 0 });
      expect(await pool.parseJson(Buffer.from('{"a":"123456","b":["1234567"],"c":"x"}'), 5)).toEqual({
        value: { a: '', b: [''], c: 'x' },
        cutChars: 7,
      });
      await expect(pool.parseJson(Buffer.from('{"a":'))).rejects.toThrow(/JSON/);
    } finally {
      await pool.close();
    }
  }, 60_000);
});
