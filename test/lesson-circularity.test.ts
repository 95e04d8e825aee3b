/** The prediction-versus-measurement sentence (src/lesson/circularity.ts) is computed from the target. */
import { describe, expect, it } from 'vitest';
import { circularityNote } from '../src/lesson/helpers';

describe('circularityNote', () => {
  it('says agreement on the simulator is partly by construction', () => {
    const s = circularityNote({ simulated: true, config: { version: '0.19.0' } });
    expect(s).toMatch(/模拟器/);
    expect(s).toMatch(/构造使然/);
    expect(s).toMatch(/cost\.ts/);
  });

  it('on a real vLLM names the version and puts the doubt on the prediction', () => {
    const s = circularityNote({ simulated: false, config: { version: '0.10.2' } });
    expect(s).toMatch(/真实的 vLLM 0\.10\.2/);
    expect(s).not.toMatch(/构造使然/);
    expect(circularityNote({ simulated: false })).toMatch(/真实的 vLLM：/);
  });
});

describe('circularityNote on saved runs (lesson 07)', () => {
  it('speaks of the runs, not of a server answering now', () => {
    expect(circularityNote({ simulated: true, saved: true })).toMatch(/^注意：这些保存的运行来自模拟器，/);
    expect(circularityNote({ simulated: false, saved: true })).toMatch(/^这些保存的运行来自真实的 vLLM：/);
  });
});
