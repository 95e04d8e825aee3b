import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHALLENGES_PROMPT, estimateTokens, LITHOGRAPHY_PROMPT, LONG_PROMPT, promptOfTokens } from '../src/workload/prompts';
import {
  longPlusShort,
  makeRequest,
  repeatRequest,
  sharedPrefixRequests,
  shortLongMix,
  uniquePrefixRequests,
} from '../src/workload/workload';

describe('course prompts and estimates', () => {
  it('has the course texts', () => {
    expect(CHALLENGES_PROMPT).toBe('请列举 5 个关于人工智能未来发展的关键挑战，并简要说明原因。');
    expect(LONG_PROMPT).toBe('在人工智能领域，显存带宽与计算能力的平衡是至关重要的。'.repeat(300));
    expect(LITHOGRAPHY_PROMPT.length).toBe('详细阐述半导体制造工艺中光刻机的原理及其在制程微缩中的作用。'.length * 15);
  });

  it('estimates ≈0.62/Chinese character and ≈1.3/English word', () => {
    expect(estimateTokens('你好')).toBe(1); // 1.24
    expect(estimateTokens('一二三四五六七八九十')).toBe(6); // 6.2
    expect(estimateTokens('hello big world')).toBe(4); // 3.9
    expect(estimateTokens('')).toBe(0);
  });
});

describe('promptOfTokens', () => {
  let server: Server;
  let url: string;
  let calls = 0;
  beforeAll(async () => {
    // A /tokenize with a known tokenizer: one token per character (punctuation included).
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        if (req.url !== '/tokenize') {
          res.statusCode = 404;
          return void res.end('{}');
        }
        calls++;
        const { prompt } = JSON.parse(body) as { prompt: string };
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ count: [...prompt].length, max_model_len: 4096, tokens: [] }));
      });
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('adjusts to the exact count with /tokenize', async () => {
    const p = await promptOfTokens(1500, { baseUrl: url });
    expect(p).toMatchObject({ tokens: 1500, estimated: false, method: 'tokenize' });
    expect([...p.text].length).toBe(1500);
    expect(calls).toBeLessThanOrEqual(8);
  });

  it('falls back to an estimate, and says so', async () => {
    const none = await promptOfTokens(200);
    expect(none.estimated).toBe(true);
    expect(none.method).toBe('estimate');
    expect(Math.abs(none.tokens - 200)).toBeLessThanOrEqual(2);
    const bad = await promptOfTokens(200, { baseUrl: `${url}/nothing-here` });
    expect(bad.estimated).toBe(true);
    expect(bad.note).toContain('/tokenize unavailable');
    await expect(promptOfTokens(0)).rejects.toThrow('targetTokens must be an integer ≥ 1, got 0');
  });
});

describe('workload builders', () => {
  it('makeRequest: chat or completions, options carried', () => {
    expect(makeRequest('hi', { maxTokens: 8, fixedOutput: true, tag: 't' })).toEqual({
      api: 'chat',
      messages: [{ role: 'user', content: 'hi' }],
      maxTokens: 8,
      fixedOutput: true,
      tag: 't',
    });
    expect(makeRequest('hi', { api: 'completions', system: 'sys' })).toEqual({ api: 'completions', prompt: 'sys\n\nhi' });
    expect(() => makeRequest('hi', { fixedOutput: true })).toThrow('fixedOutput needs maxTokens');
    expect(repeatRequest(3, 'x')).toHaveLength(3);
  });

  it('longPlusShort: one long at 0, 20 shorts at 50 ms, max_tokens 10', () => {
    const t = longPlusShort();
    expect(t.kind).toBe('timeline');
    expect(t.atMs).toEqual([0, ...new Array(20).fill(50)]);
    expect(t.requests![0]).toMatchObject({ tag: 'long', maxTokens: 10 });
    expect(t.requests![0].messages![0].content).toBe(LONG_PROMPT);
    expect(t.requests!.slice(1).every((r) => r.tag === 'short' && r.messages![0].content === '你好')).toBe(true);
  });

  it('shortLongMix: seeded, exactly 10% long', () => {
    const a = shortLongMix(50, { seed: 3 });
    expect(a.filter((r) => r.tag === 'long')).toHaveLength(5);
    expect(a.filter((r) => r.tag === 'short')).toHaveLength(45);
    expect(shortLongMix(50, { seed: 3 }).map((r) => r.tag)).toEqual(a.map((r) => r.tag));
    expect(shortLongMix(50, { seed: 4 }).map((r) => r.tag)).not.toEqual(a.map((r) => r.tag));
  });

  it('shared vs unique system prompts', () => {
    const sys = '你是一个助理。'.repeat(100);
    const shared = sharedPrefixRequests(4, { systemPrompt: sys, maxTokens: 16 });
    const unique = uniquePrefixRequests(4, { systemPrompt: sys, maxTokens: 16 });
    expect(new Set(shared.map((r) => r.messages![0].content)).size).toBe(1);
    expect(new Set(unique.map((r) => r.messages![0].content)).size).toBe(4);
    // unique prompts differ from the very first characters (prefix-cache blocks chain from token 0)
    expect(new Set(unique.map((r) => r.messages![0].content.slice(0, 8))).size).toBe(4);
    expect(shared.every((r) => r.tag === 'shared')).toBe(true);
    expect(unique.every((r) => r.tag === 'unique')).toBe(true);
    expect(new Set(shared.map((r) => r.messages![1].content)).size).toBe(4);
  });
});
