/** The simulator's tokenizer: Qwen counts, Qwen2.5's chat template, and exact incremental pseudo-text. */
import { beforeAll, describe, expect, it } from 'vitest';
import { seededRng } from '../src/rng';
import { detectLanguage, EOS_TOKEN_ID, loadTokenizer, renderChat, type SimTokenizer } from '../src/sim/http/tokens';

let tok: SimTokenizer;
const ZH = '在人工智能领域，显存带宽与计算能力的平衡是至关重要的。';

beforeAll(async () => {
  tok = await loadTokenizer();
});

describe('SimTokenizer', () => {
  it('counts the course sentence as 17 tokens, +29 in the default chat template, +8 without a system block', () => {
    expect(tok.encodePrompt(ZH)).toHaveLength(17);
    expect(tok.encodeChat([{ role: 'user', content: ZH }])).toHaveLength(46);
    expect(
      tok.encodeChat([
        { role: 'system', content: '' },
        { role: 'user', content: ZH },
      ]).length,
    ).toBe(17 + 8 + 5);
    expect(tok.encodeChat([{ role: 'user', content: [{ type: 'text', text: ZH }] }])).toHaveLength(46);
  });

  it("renders Qwen2.5's template", () => {
    expect(renderChat([{ role: 'user', content: 'hi' }])).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(
      renderChat(
        [
          { role: 'system', content: 'S' },
          { role: 'user', content: 'hi' },
        ],
        { addGenerationPrompt: false },
      ),
    ).toBe('<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n');
  });

  it('caches repeated prompts', () => {
    const long = ZH.repeat(50);
    expect(tok.encodePrompt(long)).toBe(tok.encodePrompt(long));
  });

  it("generates seeded text whose per-step pieces concatenate to the decoded ids, in the prompt's language", () => {
    for (const lang of ['en', 'zh'] as const) {
      const run = () => {
        const g = tok.textGen(lang, seededRng(42));
        const steps = Array.from({ length: 80 }, (_, i) => g.next(1, i === 79));
        return { ids: steps.flatMap((s) => s.ids), text: steps.map((s) => s.text).join('') };
      };
      const a = run();
      expect(a).toEqual(run());
      expect(a.ids).toHaveLength(80);
      expect(a.ids.at(-1)).toBe(EOS_TOKEN_ID);
      expect(tok.decode(a.ids, true)).toBe(a.text);
      expect(detectLanguage(a.text)).toBe(lang);
    }
    expect(detectLanguage(ZH)).toBe('zh');
    expect(detectLanguage('What is KV cache?')).toBe('en');
  });
});
