/**
 * A calibrated profile serves live (issue #14): calibrate (quick plan) against a simulator running a
 * hidden "unknown GPU" profile, write the calibrated profile file, start a second simulator from it,
 * and drive both with the same closed loops through `runLoad` over real HTTP. Only invariants are
 * asserted (every request completes on both, no prefix-cache hits, and both servers order the
 * concurrencies the same way by throughput); the live errors themselves are figures for
 * `bench/calibration-live.ts`, never wall-clock asserts here.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibrate } from '../src/fit/calibration';
import { hiddenProfile } from '../src/fit/hidden-profile';
import { calibratedDocument } from '../src/fit/profile-doc';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { DEFAULT_PROFILE } from '../src/sim/engine/profile';
import { loadProfileFile } from '../src/sim/engine/profile-file';
import { startSim } from '../src/sim/start';
import type { RunSummary } from '../src/types';

const SEED = 11;
const LEVELS = [1, 16];
const tmp = mkdtempSync(join(tmpdir(), 'loadlab-fit-live-'));
const runs: Record<'hidden' | 'calibrated', RunSummary[]> = { hidden: [], calibrated: [] };
const cached: Record<'hidden' | 'calibrated', number> = { hidden: 0, calibrated: 0 };
let calibratedStatus: unknown;
/** Cached prompt tokens of a prompt sent twice: shows the servers report prefix-cache hits at all. */
let repeatCached = 0;

/** The same closed loops on one server: 256-token prompts (unique token ids), 32 output tokens. */
async function drive(profileFile: string, who: 'hidden' | 'calibrated', before?: (url: string) => Promise<void>) {
  // vLLM reports usage.prompt_tokens_details.cached_tokens only with --enable-prompt-tokens-details
  // (vllm/entrypoints/openai/completion/serving.py); without it a zero cached count would prove nothing.
  const sim = await startSim({ profile: profileFile, extraArgs: ['--enable-prompt-tokens-details'] });
  try {
    await before?.(sim.baseUrl);
    for (const [k, c] of LEVELS.entries()) {
      const r = await runLoad({
        baseUrl: sim.baseUrl,
        shape: closedLoop(c),
        requests: 2 * Math.max(c, 4),
        workload: (i) => ({
          api: 'completions',
          prompt: Array.from({ length: 256 }, (_, j) => 1 + ((((k + 1) * 10_000 + i) * 131 + j * 17) % 100_000)),
          maxTokens: 32,
          fixedOutput: true,
        }),
        out: false,
        sampleMetrics: false,
      });
      runs[who].push(r.summary);
      cached[who] += r.records.reduce((a, x) => a + (x.cachedTokens ?? 0), 0);
    }
  } finally {
    await sim.stop();
  }
}

beforeAll(async () => {
  const hidden = hiddenProfile(SEED);
  const hiddenFile = join(tmp, 'hidden.json');
  const fitFile = join(tmp, 'calibrated.json');
  writeFileSync(hiddenFile, JSON.stringify(hidden.document));
  await drive(hiddenFile, 'hidden', async (url) => {
    const r = await calibrate({ baseUrl: url, prior: DEFAULT_PROFILE, quick: true });
    const doc = calibratedDocument(r, loadProfileFile(), 'calibrated-live-test');
    calibratedStatus = doc.status;
    writeFileSync(fitFile, JSON.stringify(doc));
  });
  await drive(fitFile, 'calibrated', async (url) => {
    const same = {
      api: 'completions' as const,
      prompt: Array.from({ length: 256 }, (_, j) => 7 + j),
      maxTokens: 4,
      fixedOutput: true,
    };
    const r = await runLoad({ baseUrl: url, shape: closedLoop(1), workload: [same, same], out: false, sampleMetrics: false });
    repeatCached = r.records[1]?.cachedTokens ?? 0;
  });
}, 240_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('a calibrated profile, served live beside the hidden one', () => {
  it('starts a simulator from the calibrated file', () => {
    expect(calibratedStatus).toBe('calibrated');
    expect(runs.calibrated).toHaveLength(LEVELS.length);
  });

  it('completes every request on both servers, with no prefix-cache hits', () => {
    for (const who of ['hidden', 'calibrated'] as const)
      for (const s of runs[who]) {
        expect(s.failed, who).toBe(0);
        expect(s.completed, who).toBe(s.requests);
        expect(s.totalOutputTokens, who).toBe(32 * s.requests);
      }
    expect(cached).toEqual({ hidden: 0, calibrated: 0 });
    expect(repeatCached).toBeGreaterThan(0); // the same check does see a repeated prompt's hit
  });

  it('orders the concurrencies by throughput the same way on both servers', () => {
    const order = (ss: RunSummary[]) =>
      ss
        .map((s, i) => [s.outputTokensPerSec, i])
        .sort((a, b) => a[0] - b[0])
        .map((x) => x[1]);
    expect(order(runs.calibrated)).toEqual(order(runs.hidden));
  });
});
