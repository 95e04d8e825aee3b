/**
 * A streamed choice without stop strings or logprobs keeps only what it has not sent (src/sim/http/gen-choice.ts):
 * its deltas are the same as a choice that keeps its whole text and ids, and nothing grows with the stream.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { seededRng } from '../src/rng';
import { advance, newChoices, takeDelta } from '../src/sim/http/gen-choice';
import type { GenServer } from '../src/sim/http/gen-server';
import { type GenRequest, parseGenRequest } from '../src/sim/http/requests';
import { loadTokenizer, type SimTokenizer } from '../src/sim/http/tokens';

let tok: SimTokenizer;
beforeAll(async () => {
  tok = await loadTokenizer();
});

/** What advance/newChoices use of a server: the tokenizer, a seed source, and an engine that is never asked to abort here. */
const server = () =>
  ({
    tok,
    rng: seededRng(7),
    engine: {
      abort() {
        throw new Error('no stop string here: nothing to abort');
      },
    },
  }) as unknown as GenServer;

const request = (extra: Record<string, unknown>): GenRequest =>
  parseGenRequest('completions', { prompt: 'Say anything.', max_tokens: 40, ignore_eos: true, ...extra }, tok, {
    servedModelName: 'm',
    maxModelLen: 4096,
  });

/** Runs 40 engine outputs of one token each through choice 0, taking a delta every `every` outputs. */
function stream(req: GenRequest, every: number) {
  const [c] = newChoices(server(), req, { id: 'cmpl-x', engineId: 'x', arrivalMs: 0 });
  const deltas = [];
  for (let k = 1; k <= 40; k++) {
    const reason = advance(server(), req, c, {
      newTokens: 1,
      outputTokens: k,
      timeMs: k,
      finishReason: k === 40 ? 'length' : undefined,
    });
    if (k % every === 0 || reason) deltas.push(takeDelta(req, c, reason));
  }
  return { c, deltas };
}

describe('a streamed choice', () => {
  it('without stop strings or logprobs holds only its unsent ids and no text, and makes the same deltas', () => {
    for (const every of [1, 3]) {
      const lean = stream(request({ stream: true }), every);
      const whole = stream(request({ stream: false }), every);
      expect(lean.c.whole).toBe(false);
      expect(whole.c.whole).toBe(true);
      expect(lean.deltas).toEqual(whole.deltas);
      expect(lean.c.ids).toEqual([]);
      expect(lean.c.text).toBe('');
      expect(lean.c.textLength).toBe(whole.c.text.length);
      expect(lean.c.sentIds).toBe(40);
      expect(whole.c.ids).toHaveLength(40);
    }
  });

  it('with stop strings or logprobs keeps its whole text and ids', () => {
    for (const extra of [{ stop: ['zzz'] }, { logprobs: 1 }]) {
      const { c, deltas } = stream(request({ stream: true, ...extra }), 1);
      expect(c.whole).toBe(true);
      expect(c.ids).toHaveLength(40);
      expect(c.text).toBe(deltas.map((d) => d.text).join(''));
    }
  });
});
