/**
 * Hardware + model profiles as data. The cost model (`cost.ts`) and the KV sizing in
 * `config.ts` read only these numbers, so another card or model is a new profile object,
 * not a code change. Sources are tagged as in the calibration notes (shared/reference/sim-calibration.md):
 * [spec] vendor spec, [measured] someone measured it, [derived] computed from other
 * entries, [code] read in source code.
 */

const GiB = 1024 ** 3;

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
  /** Bytes of those linear weights as stored (int4 + scales/zeros), streamed once per step. */
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
  /** Fraction of DRAM bandwidth achieved streaming the quantised linear weights (Marlin GEMV). */
  etaWeights: number;
  /** Fraction of DRAM bandwidth achieved by the lm_head GEMV. */
  etaLmHead: number;
  /** Fraction of DRAM bandwidth achieved reading KV in decode attention. */
  etaKv: number;
  /** Effective fp16 GEMM throughput (lm_head), FLOP/s. */
  gemmFlops: number;
  /** Effective Marlin int4×fp16 GEMM throughput (linear layers), FLOP/s. */
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

/** A hardware + model pair. */
export interface Profile {
  id: string;
  gpu: GpuProfile;
  model: ModelProfile;
  perf: PerfProfile;
}

/** RTX 4090 running Qwen2.5-7B-Instruct-GPTQ-Int4 (gptq_marlin) under vLLM V1. */
export const RTX4090_QWEN25_7B_GPTQ_INT4: Profile = {
  id: 'rtx4090-qwen2.5-7b-instruct-gptq-int4',
  gpu: {
    name: 'NVIDIA GeForce RTX 4090',
    // [spec] 384-bit GDDR6X at 21 Gbps.
    memoryBandwidthBytesPerSec: 1008e9,
    // [spec] 165.2 TFLOPS dense FP16/BF16 with FP32 accumulate (half rate on GeForce).
    tensorFlopsFp16Acc32: 165.2e12,
    // [measured] torch.cuda total memory, LLMServingSim bench/examples/RTX4090 vllm/meta.json.
    deviceMemoryBytes: 25_250_627_584,
    // [measured] nvbandwidth #15: H2D 23.9–26.4, D2H 26.3–27.1 GB/s; planning value 25.
    pcieBytesPerSec: 25e9,
    // [derived estimate] 2–5 µs per DMA copy (sim-calibration C1).
    pcieCopyOverheadMs: 0.003,
  },
  model: {
    name: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
    // [code] config.json (inference-sim model_configs/qwen2.5-7b-instruct).
    numLayers: 28,
    numQueryHeads: 28,
    numKvHeads: 4,
    headDim: 128,
    hiddenSize: 3584,
    vocabSize: 152064,
    maxPositionEmbeddings: 32768,
    // [derived] 28 × 233.05M per layer.
    linearParams: 6.525e9,
    // [derived] int4 3.26 GB + fp16 scales 0.10 + int4 zeros 0.03 (group 128).
    linearWeightBytes: 3.39e9,
    // [derived] 152064 × 3584 × 2 B, unquantised fp16 lm_head.
    lmHeadBytes: 1.09e9,
    // [measured] 5.58 GB safetensors; ≈5.2 GiB in VRAM.
    weightsInVramBytes: 5.2 * GiB,
    // [measured range] 1.2–1.6 GiB (the Llama-8B 4090 run left 1.15 GiB); middle of the range.
    activationReserveBytes: 1.4 * GiB,
    // [code] fp16 KV cache (cache_dtype auto).
    kvDtypeBytes: 2,
  },
  perf: {
    // [measured range] Marlin at small batch 0.75–0.9; bf16 GEMV measured 0.87–0.94.
    etaWeights: 0.85,
    // [measured] lm_head GEMV at 957 GB/s.
    etaLmHead: 0.93,
    // [measured] decode attention 0.8–0.95 TB/s of KV reads (LLMServingSim 4090 profile).
    etaKv: 0.9,
    // [measured] large bf16 GEMM 158–166 TFLOPS.
    gemmFlops: 160e12,
    // [derived] 0.85 × gemmFlops; Marlin saturates below fp16 cuBLAS (vLLM PR #2497).
    marlinFlops: 0.85 * 160e12,
    // [measured] flash-attention prefill ≈100 TFLOPS.
    attnFlops: 100e12,
    // [derived] V1 + CUDA graphs ≈1–2.5 ms; BLIS fit ≈1.0 ms; 1.5 ms reproduces 150 tok/s single stream.
    stepOverheadMs: 1.5,
    // [measured fit] BLIS β6 ≈4–5 µs per request.
    perSeqOverheadMs: 0.0045,
    // [code] pre-0.12 layout: 2 (K,V) × 28 layers fragments of 16 KiB per 16-token block.
    swapCopiesPerBlock: 2 * 28,
    // [estimate] 2–10 ms HTTP + tokenize + detokenize on a desktop CPU (sim-calibration A6.10).
    apiOverheadMs: 3,
  },
};

/** The profile used when none is given. */
export const DEFAULT_PROFILE: Profile = RTX4090_QWEN25_7B_GPTQ_INT4;

/** KV cache bytes per token: 2 (K and V) · layers · KV heads · head_dim · dtype bytes. Qwen2.5-7B: 57,344 B. */
export function kvBytesPerToken(profile: Profile = DEFAULT_PROFILE): number {
  const m = profile.model;
  return 2 * m.numLayers * m.numKvHeads * m.headDim * m.kvDtypeBytes;
}

/** Bytes of one KV block of `blockSize` tokens (default 16 → 917,504 B for Qwen2.5-7B). */
export function kvBlockBytes(profile: Profile = DEFAULT_PROFILE, blockSize = 16): number {
  return kvBytesPerToken(profile) * blockSize;
}
