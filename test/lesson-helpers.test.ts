/** The lesson helpers notebooks import (src/lesson/helpers.ts): prose, number formats, chart paths, useFlags. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { f0, f1, lesson, makeUseFlags, sayMarkdown } from '../src/lesson/helpers';
import type { ServerFlags } from '../src/vllm/flag-types';
import { fromRoot } from '../src/paths';

describe('lesson helpers', () => {
  it('sayMarkdown: a string as it is, an array as a bullet list', () => {
    expect(sayMarkdown('**p99** rose')).toBe('**p99** rose');
    expect(sayMarkdown(['one', 'two'])).toBe('- one\n- two');
    expect(sayMarkdown([])).toBe('');
  });

  it('f0/f1 format finite numbers and show a dash for the rest', () => {
    expect([f0(12.6), f1(12.66), f0(-0.4), f1(3)]).toEqual(['13', '12.7', '-0', '3.0']);
    for (const x of [NaN, Infinity, -Infinity]) expect([f0(x), f1(x)]).toEqual(['—', '—']);
  });

  it('lesson(name) puts charts under data/<name>/charts and rejects a path as a name', () => {
    const l = lesson('02-concurrency');
    expect(l.dir).toBe(fromRoot('data', '02-concurrency'));
    expect(l.chartFile('ttft-vs-c')).toBe(join(l.dir, 'charts', 'ttft-vs-c.html'));
    expect(lesson('x', { dataDir: '/tmp/d' }).chartFile('a')).toBe(join('/tmp/d', 'x', 'charts', 'a.html'));
    expect(() => lesson('../etc')).toThrow(/plain folder name/);
    expect(() => lesson('')).toThrow(/plain folder name/);
  });

  it('makeUseFlags restarts the target and names the vllm serve command; external targets keep their notes', async () => {
    const restarts: ServerFlags[] = [];
    const sim = { mode: 'sim' as const, model: 'M', notes: ['n'], restart: async (f: ServerFlags) => void restarts.push(f) };
    const r = await makeUseFlags(sim)({ enableChunkedPrefill: false, maxNumSeqs: 256 });
    expect(restarts).toEqual([{ enableChunkedPrefill: false, maxNumSeqs: 256 }]);
    expect(r.command.startsWith('vllm serve M ')).toBe(true);
    expect(r.command).toContain('--no-enable-chunked-prefill');
    expect(r.command).toContain('--max-num-seqs 256');
    expect(r.notes).toEqual(['restarted with these flags']);
    const ext = { ...sim, mode: 'external' as const, notes: ['restart vLLM yourself'] };
    expect((await makeUseFlags(ext, { restartedNote: 'x' })({})).notes).toEqual(['restart vLLM yourself']);
    expect((await makeUseFlags(sim, { restartedNote: 'empty cache' })({})).notes).toEqual(['empty cache']);
  });
});
