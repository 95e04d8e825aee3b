/**
 * The shapes of a simulator profile (GPU, model, serving-stack efficiencies), as the cost model
 * (`cost.ts`) and the KV sizing (`config.ts`) read them. The numbers live in JSON files under
 * `profiles/` (one per GPU + model pair, every number with its source); `profile-schema.ts`
 * checks a file and turns it into a `Profile`.
 */

/** The GPU: memory system, tensor throughput, host link. */
export interface GpuProfile {
  name: string;
  /** DRAM bandwidth, bytes/s. */
  memoryBandwidthBytesPerSec: number;
  /** Dense FP16/BF16 tensor throughput with FP32 accumulate, FLOP/s (the roof cuBLAS and Marlin hit). */
  tensorFlopsFp16Acc32: number;
  /** Device memory as CUDA reports it, bytes. */
  deviceMemoryBytes: number;
  /** Host↔device copy bandwidth, one direction, pinned memory, bytes/s. */
  pcieBytesPerSec: number;
  /** Fixed cost of one host↔device copy (DMA launch), ms. */
  pcieCopyOverheadMs: number;
}

/** The model: shapes that set KV size and FLOPs, and the bytes each step streams. */
export interface ModelProfile {
  /** HF model id; also a sensible default for `--served-model-name`. */
  name: string;
  numLayers: number;
  numQueryHeads: number;
  numKvHeads: number;
  headDim: number;
  hiddenSize: number;
  vocabSize: number;
  /** Default `--max-model-len`, tokens. */
  maxPositionEmbeddings: number;
  /** Parameters in the linear layers (no embedding, no lm_head). */
  linearParams: number;
  /** Bytes of those linear weights as stored (int4 + scales/zeros, or fp16), streamed once per step. */
  linearWeightBytes: number;
  /** Bytes of the (unquantised fp16) lm_head, streamed once per step. */
  lmHeadBytes: number;
  /** Everything the weights occupy in VRAM, bytes. */
  weightsInVramBytes: number;
  /** Peak activations + workspace + non-torch memory (+ CUDA graphs) that vLLM's profiling run subtracts, bytes. */
  activationReserveBytes: number;
  /** Bytes per KV element (fp16 KV cache = 2). */
  kvDtypeBytes: number;
}

/** Efficiencies and overheads of the serving stack (vLLM V1 with CUDA graphs) on this pair. */
export interface PerfProfile {
  /** Fraction of DRAM bandwidth achieved streaming the linear weights (Marlin GEMV for int4, cuBLAS GEMV for fp16). */
  etaWeights: number;
  /** Fraction of DRAM bandwidth achieved by the lm_head GEMV. */
  etaLmHead: number;
  /** Fraction of DRAM bandwidth achieved reading KV in decode attention. */
  etaKv: number;
  /** Effective fp16 GEMM throughput (lm_head), FLOP/s. */
  gemmFlops: number;
  /** Effective GEMM throughput of the linear layers (Marlin int4×fp16 for quantised weights, cuBLAS for fp16), FLOP/s. */
  marlinFlops: number;
  /** Effective flash-attention prefill throughput, FLOP/s. */
  attnFlops: number;
  /** Fixed engine overhead per step (scheduling, launch, sync), ms (t0). */
  stepOverheadMs: number;
  /** Extra overhead per scheduled request per step (input prep, sampler), ms (t_seq). */
  perSeqOverheadMs: number;
  /** Host↔device copies per swapped KV block: V0 layout copies one fragment per layer for K and for V. */
  swapCopiesPerBlock: number;
  /** Non-engine latency per request (HTTP, tokenize, detokenize) on a desktop CPU, ms. Used by the HTTP surface. */
  apiOverheadMs: number;
}

/**
 * What a profile's numbers rest on: `spec-derived, not calibrated` (vendor spec sheets, model
 * configs, published measurements; never fitted to a run of ours) or `calibrated` (fitted to a
 * server by a calibration, which then records what it ran against).
 */
export type ProfileStatus = 'spec-derived, not calibrated' | 'calibrated' | 'made up, for calibration practice';

/** A hardware + model pair. */
export interface Profile {
  /** File stem under `profiles/`, e.g. `rtx4090-qwen2.5-7b-instruct-gptq-int4`. */
  id: string;
  gpu: GpuProfile;
  model: ModelProfile;
  perf: PerfProfile;
  /** Where the numbers come from; absent on a profile built in code (tests). */
  status?: ProfileStatus;
}
