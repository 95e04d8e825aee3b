/**
 * Hardware + model profiles as data. The cost model (`cost.ts`) and the KV sizing in
 * `config.ts` read only these numbers, so another card or model is another profile file
 * (`profiles/*.json`, checked by `profile-schema.ts`), not a code change. Each number in a file
 * carries its source, tagged as in the calibration notes (shared/reference/sim-calibration.md).
 */
import { DEFAULT_PROFILE_NAME, defaultProfileName, loadProfileFile } from './profile-file';
import type { Profile } from './profile-types';

export type { GpuProfile, ModelProfile, PerfProfile, Profile, ProfileStatus } from './profile-types';

/**
 * RTX 4090 running Qwen2.5-7B-Instruct-GPTQ-Int4 (gptq_marlin) under vLLM V1, read from
 * `profiles/rtx4090-qwen2.5-7b-instruct-gptq-int4.json` when this module loads.
 */
export const RTX4090_QWEN25_7B_GPTQ_INT4: Profile = loadProfileFile(DEFAULT_PROFILE_NAME).profile;

/**
 * The profile used when none is given: the one `LOADLAB_SIM_PROFILE` names when set (so a lesson's
 * predictions use the profile its simulator runs), else the RTX 4090 + Qwen2.5-7B-Instruct-GPTQ-Int4 file.
 */
export const DEFAULT_PROFILE: Profile =
  defaultProfileName() === DEFAULT_PROFILE_NAME ? RTX4090_QWEN25_7B_GPTQ_INT4 : loadProfileFile(defaultProfileName()).profile;

/** KV cache bytes per token: 2 (K and V) · layers · KV heads · head_dim · dtype bytes. Qwen2.5-7B: 57,344 B. */
export function kvBytesPerToken(profile: Profile = DEFAULT_PROFILE): number {
  const m = profile.model;
  return 2 * m.numLayers * m.numKvHeads * m.headDim * m.kvDtypeBytes;
}

/** Bytes of one KV block of `blockSize` tokens (default 16 → 917,504 B for Qwen2.5-7B). */
export function kvBlockBytes(profile: Profile = DEFAULT_PROFILE, blockSize = 16): number {
  return kvBytesPerToken(profile) * blockSize;
}
