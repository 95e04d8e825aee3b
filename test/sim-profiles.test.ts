/**
 * Simulator profiles as files (`profiles/*.json`): every shipped one loads and validates, the default
 * keeps the simulator's numbers, the generator reproduces the checked-in files, and a broken file is
 * refused with the file, the field and the fix in the message.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildAll } from '../profiles/make-profiles';
import { resolveEngineConfig } from '../src/sim/engine/config';
import { addDecode, addPrefill, emptyBatch, stepTimeMs } from '../src/sim/engine/cost';
import { DEFAULT_PROFILE, type Profile } from '../src/sim/engine/profile';
import { DEFAULT_PROFILE_NAME, listProfiles, loadProfileFile, profilesDir } from '../src/sim/engine/profile-file';
import { parseProfileDocument } from '../src/sim/engine/profile-schema';
import { splitProfileArgs } from '../src/sim/profile-args';
import { savedServerDiffers } from '../src/runner/saved-point';
import type { RunManifest } from '../src/run/manifest';

const GiB = 1024 ** 3;

/** The default profile as it was written in src/sim/engine/profile.ts before it became a file. */
const TODAYS_DEFAULT = {
  id: 'rtx4090-qwen2.5-7b-instruct-gptq-int4',
  gpu: {
    name: 'NVIDIA GeForce RTX 4090',
    memoryBandwidthBytesPerSec: 1008e9,
    tensorFlopsFp16Acc32: 165.2e12,
    deviceMemoryBytes: 25_250_627_584,
    pcieBytesPerSec: 25e9,
    pcieCopyOverheadMs: 0.003,
  },
  model: {
    name: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
    numLayers: 28,
    numQueryHeads: 28,
    numKvHeads: 4,
    headDim: 128,
    hiddenSize: 3584,
    vocabSize: 152064,
    maxPositionEmbeddings: 32768,
    linearParams: 6.525e9,
    linearWeightBytes: 3.39e9,
    lmHeadBytes: 1.09e9,
    weightsInVramBytes: 5.2 * GiB,
    activationReserveBytes: 1.4 * GiB,
    kvDtypeBytes: 2,
  },
  perf: {
    etaWeights: 0.85,
    etaLmHead: 0.93,
    etaKv: 0.9,
    gemmFlops: 160e12,
    marlinFlops: 0.85 * 160e12,
    attnFlops: 100e12,
    stepOverheadMs: 1.5,
    perSeqOverheadMs: 0.0045,
    swapCopiesPerBlock: 2 * 28,
    apiOverheadMs: 3,
  },
};

const GPUS = ['rtx3090', 'rtx4090', 'l40s', 'a100-40gb', 'h100-80gb'];
const MODELS = [
  'qwen2.5-7b-instruct-gptq-int4',
  'qwen2.5-7b-instruct-awq',
  'qwen2.5-7b-instruct-fp16',
  'qwen2.5-14b-instruct-gptq-int4',
];

function tpotMs(p: Profile, context = 512): number {
  const b = emptyBatch();
  addDecode(b, context);
  return stepTimeMs(b, p);
}

/** The default file's JSON with `edit` applied, checked as `bad.json`. */
function checkEdited(edit: (doc: Record<string, any>) => void): () => void {
  const doc = JSON.parse(loadProfileFile(DEFAULT_PROFILE_NAME).text);
  edit(doc);
  return () => parseProfileDocument(doc, 'bad.json');
}

describe('shipped profiles', () => {
  it('are 5 GPUs × 4 models, each loading, labelled spec-derived and named after its file', () => {
    const names = listProfiles();
    expect(names).toEqual(GPUS.flatMap((g) => MODELS.map((m) => `${g}-${m}`)).sort());
    for (const name of names) {
      const p = loadProfileFile(name);
      expect(p.profile.id).toBe(name);
      expect(p.profile.status).toBe('spec-derived, not calibrated');
      expect(p.calibration).toBeUndefined();
      // Every shipped pair fits its GPU with room for a max_model_len sequence at vLLM's defaults.
      expect(resolveEngineConfig({}, p.profile).numGpuBlocks).toBeGreaterThan(32768 / 16);
    }
  });

  it('never tag a perf number "measured" on a GPU other than the RTX 4090', () => {
    for (const name of listProfiles().filter((n) => !n.startsWith('rtx4090'))) {
      const doc = JSON.parse(loadProfileFile(name).text);
      for (const [field, v] of Object.entries(doc.perf as Record<string, { source: string }>)) {
        expect([name, field, v.source]).not.toEqual([name, field, 'measured']);
      }
    }
  });

  it('the default file holds the numbers the simulator always used', () => {
    const { status, ...numbers } = DEFAULT_PROFILE;
    expect(numbers).toEqual(TODAYS_DEFAULT);
    expect(status).toBe('spec-derived, not calibrated');
  });

  it('profiles/make-profiles.ts reproduces every checked-in file', () => {
    const built = buildAll();
    expect([...built.keys()].sort()).toEqual(listProfiles().map((n) => `${n}.json`));
    for (const [file, text] of built) expect(readFileSync(join(profilesDir(), file), 'utf8'), file).toBe(text);
  });

  it('order GPUs as their bandwidth does in the cost model (decode) and their tensor throughput (prefill)', () => {
    const p = (g: string, m = MODELS[0]) => loadProfileFile(`${g}-${m}`).profile;
    const decode = GPUS.map((g) => tpotMs(p(g)));
    const [r3090, r4090, l40s, a100, h100] = decode;
    expect(h100).toBeLessThan(a100);
    expect(a100).toBeLessThan(r4090);
    expect(r4090).toBeLessThan(r3090);
    expect(r4090).toBeLessThan(l40s); // L40S: 864 GB/s against the 4090's 1008
    expect(tpotMs(p('rtx4090', MODELS[2]))).toBeGreaterThan(2 * r4090); // fp16 streams about 3× the bytes of int4
    expect(tpotMs(p('rtx4090', MODELS[3]))).toBeGreaterThan(r4090);
    const chunk = (prof: Profile) => {
      const b = emptyBatch();
      addPrefill(b, 2048, 0);
      return stepTimeMs(b, prof);
    };
    expect(chunk(p('h100-80gb'))).toBeLessThan(chunk(p('l40s')));
    expect(chunk(p('l40s'))).toBeLessThan(chunk(p('rtx4090')));
  });
});

describe('a broken profile file is refused, naming the file, the field and the fix', () => {
  it('an unknown field, with a did-you-mean', () => {
    expect(
      checkEdited((d) => {
        d.gpu.memoryBandwidthBytesPerSecc = d.gpu.memoryBandwidthBytesPerSec;
        delete d.gpu.memoryBandwidthBytesPerSec;
      }),
    ).toThrow(
      /^bad\.json: gpu\.memoryBandwidthBytesPerSecc: unknown field; remove it or fix its name\. Did you mean memoryBandwidthBytesPerSec\?/,
    );
    expect(checkEdited((d) => (d.colour = 'red'))).toThrow(/bad\.json: colour: unknown field/);
  });

  it('a missing number', () => {
    expect(checkEdited((d) => delete d.perf.etaKv)).toThrow(
      /^bad\.json: perf\.etaKv: missing; add \{ "value": …, "unit": "fraction"/,
    );
  });

  it('a wrong unit, with the conversion factor', () => {
    expect(
      checkEdited((d) => (d.gpu.memoryBandwidthBytesPerSec = { ...d.gpu.memoryBandwidthBytesPerSec, value: 1008, unit: 'GB/s' })),
    ).toThrow(
      /bad\.json: gpu\.memoryBandwidthBytesPerSec\.unit: must be "B\/s", got "GB\/s"; write the value in B\/s \(multiply by 1000000000\)/,
    );
    expect(checkEdited((d) => (d.perf.stepOverheadMs.unit = 's'))).toThrow(/perf\.stepOverheadMs\.unit: .*multiply by 1000/);
  });

  it('a value in the wrong unit under the right unit name', () => {
    expect(checkEdited((d) => (d.gpu.memoryBandwidthBytesPerSec.value = 1008))).toThrow(
      /bad\.json: gpu\.memoryBandwidthBytesPerSec\.value: 1008 B\/s is outside \[100000000, 100000000000000\]; check the unit/,
    );
    expect(checkEdited((d) => (d.perf.etaWeights.value = 85))).toThrow(
      /perf\.etaWeights\.value: 85 fraction is outside \(0, 1\]/,
    );
  });

  it('a number without its source, or with a fit tag but no calibration', () => {
    expect(checkEdited((d) => delete d.perf.etaKv.source)).toThrow(/perf\.etaKv\.source: must be one of spec, config/);
    expect(checkEdited((d) => (d.perf.etaKv.note = ''))).toThrow(/perf\.etaKv\.note: missing; say which document or formula/);
    expect(checkEdited((d) => (d.perf.etaKv.source = 'fit'))).toThrow(/perf\.etaKv\.source: "fit" without a calibration block/);
    expect(checkEdited((d) => (d.status = 'calibrated'))).toThrow(/bad\.json: calibration: missing for status "calibrated"/);
  });

  it('accepts a calibration block, the room a fit will use', () => {
    const ok = checkEdited((d) => {
      d.status = 'calibrated';
      d.perf.etaKv.source = 'fit';
      d.calibration = { against: { serverVersion: '0.19.0' }, residuals: [], intervals: { etaKv: { low: 0.85, high: 0.95 } } };
    });
    expect(ok).not.toThrow();
    expect(checkEdited((d) => (d.calibration = { against: {}, residuals: [], intervals: { eta: { low: 0, high: 1 } } }))).toThrow(
      /calibration\.intervals\.eta: not a perf field/,
    );
  });

  it("a model that cannot fit the GPU at all, with vLLM's startup error", () => {
    expect(checkEdited((d) => (d.gpu.deviceMemoryBytes.value = 6 * GiB))).toThrow(
      /bad\.json: model\.weightsInVramBytes: .*needs 6\.60 GiB .* has 6\.00 GiB; vLLM would fail at startup with "No available memory for the cache blocks" \(vllm\/v1\/core\/kv_cache_utils\.py\); pick a GPU/,
    );
  });

  it('a file that is not JSON, a missing file, and a mistyped NAME', () => {
    const dir = mkdtempSync(join(tmpdir(), 'loadlab-profile-'));
    const file = join(dir, 'x.json');
    writeFileSync(file, '{ "format": ');
    expect(() => loadProfileFile(file)).toThrow(new RegExp(`^${file}: not valid JSON`));
    expect(() => loadProfileFile(join(dir, 'nope.json'))).toThrow(/does not exist; give an existing JSON file or a NAME/);
    expect(() => loadProfileFile('l40s-qwen2.5-7b-instrct-awq')).toThrow(
      /unknown profile 'l40s-qwen2\.5-7b-instrct-awq'\. Did you mean l40s-qwen2\.5-7b-instruct-awq/,
    );
  });
});

describe('profile flags and saved points', () => {
  it('--profile and --print-profile are taken out before the vllm serve flags', () => {
    expect(splitProfileArgs(['--port', '0', '--profile', 'a', '--max-num-seqs', '4'])).toEqual({
      profile: 'a',
      rest: ['--port', '0', '--max-num-seqs', '4'],
    });
    expect(splitProfileArgs(['--profile=b.json'])).toEqual({ profile: 'b.json', rest: [] });
    expect(splitProfileArgs(['--print-profile'])).toEqual({ printProfile: true, rest: [] });
    expect(splitProfileArgs(['--print-profile', 'l40s-x', '--port', '1'])).toEqual({
      printProfile: 'l40s-x',
      rest: ['--port', '1'],
    });
    expect(() => splitProfileArgs(['--profile', '--port', '0'])).toThrow(
      /--profile needs a NAME or FILE, e\.g\. --profile rtx4090/,
    );
  });

  it('a point saved on one simulator profile is not reused on another', () => {
    const probe = (id?: string) => ({
      kind: 'sim' as const,
      simulated: true,
      reachable: true,
      ...(id ? { simProfile: { id, status: 'spec-derived, not calibrated' } } : {}),
    });
    const saved = (id?: string) =>
      ({
        target: { kind: 'sim', simulated: true, model: 'm', ...(id ? { simProfile: { id, status: 's' } } : {}) },
      }) as unknown as RunManifest;
    const now = (id?: string) => ({ probe: probe(id), model: 'm' });
    expect(savedServerDiffers(saved('l40s-a'), now('rtx4090-a'))).toEqual(['simulator profile l40s-a (now rtx4090-a)']);
    expect(savedServerDiffers(saved('l40s-a'), now('l40s-a'))).toEqual([]);
    // Saved before profiles were files: every simulator ran the default one.
    expect(savedServerDiffers(saved(), now(DEFAULT_PROFILE_NAME))).toEqual([]);
    expect(savedServerDiffers(saved(), now('l40s-a'))).toEqual([`simulator profile ${DEFAULT_PROFILE_NAME} (now l40s-a)`]);
  });
});
