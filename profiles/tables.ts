/**
 * The tables `make-profiles.ts` builds `profiles/*.json` from: five GPUs, four models, and the
 * reference RTX 4090 + Qwen2.5-7B-Instruct-GPTQ-Int4 numbers (the simulator's default since the
 * start, moved here unchanged from `src/sim/engine/profile.ts`). Every number carries its source.
 */
import type { SourcedNumber, SourceTag } from '../src/sim/engine/profile-schema';

const GiB = 1024 ** 3;

/** A sourced number, compactly. */
export function n(value: number, unit: string, source: SourceTag, note: string): SourcedNumber {
  return { value, unit, source, note };
}

/** One GPU row. */
export interface GpuRow {
  /** File-name prefix, e.g. `rtx4090`. */
  key: string;
  name: string;
  /** What the spec sheets say that the profile does not use directly (compute capability, PCIe generation). */
  about: string;
  memoryBandwidthBytesPerSec: SourcedNumber;
  tensorFlopsFp16Acc32: SourcedNumber;
  deviceMemoryBytes: SourcedNumber;
  pcieBytesPerSec: SourcedNumber;
  pcieCopyOverheadMs: SourcedNumber;
}

/** Bytes CUDA withheld on the 4090: 24 GiB nominal minus the 25,250,627,584 B torch reports. */
const WITHHELD_4090 = 24 * GiB - 25_250_627_584;

function deviceMemory(nominalGiB: number, extra = ''): SourcedNumber {
  return n(
    nominalGiB * GiB - WITHHELD_4090,
    'B',
    'derived',
    `${nominalGiB} GiB nominal (spec) minus the ${(WITHHELD_4090 / 2 ** 20).toFixed(0)} MiB CUDA withheld on the RTX 4090 ` +
      `(24 GiB − 25,250,627,584 B measured); no measurement of this card's total_memory${extra}`,
  );
}

const PCIE4 = n(25e9, 'B/s', 'carried-over', 'PCIe 4.0 x16 (spec sheet); the RTX 4090 measurement carried over: nvbandwidth #15 H2D 23.9–26.4, D2H 26.3–27.1 GB/s, planning value 25');
const COPY_OVERHEAD = n(0.003, 'ms', 'carried-over', 'the RTX 4090 estimate carried over: 2–5 µs per DMA copy (sim-calibration C1)');

/** The reference GPU: the default profile's numbers, unchanged. */
export const RTX4090: GpuRow = {
  key: 'rtx4090',
  name: 'NVIDIA GeForce RTX 4090',
  about: 'Ada Lovelace AD102, compute capability 8.9, PCIe 4.0 x16, 24 GB GDDR6X',
  memoryBandwidthBytesPerSec: n(1008e9, 'B/s', 'spec', 'NVIDIA Ada GPU Architecture whitepaper: 384-bit GDDR6X at 21 Gbps = 1008 GB/s'),
  tensorFlopsFp16Acc32: n(165.2e12, 'FLOP/s', 'spec', 'NVIDIA Ada GPU Architecture whitepaper: 165.2 TFLOPS dense FP16/BF16 tensor with FP32 accumulate (half rate on GeForce)'),
  deviceMemoryBytes: n(25_250_627_584, 'B', 'measured', 'torch.cuda total memory, LLMServingSim bench/examples/RTX4090 vllm/meta.json'),
  pcieBytesPerSec: n(25e9, 'B/s', 'measured', 'nvbandwidth #15: H2D 23.9–26.4, D2H 26.3–27.1 GB/s; planning value 25'),
  pcieCopyOverheadMs: n(0.003, 'ms', 'estimate', '2–5 µs per DMA copy (sim-calibration C1)'),
};

/** The five GPUs. */
export const GPUS: readonly GpuRow[] = [
  {
    key: 'rtx3090',
    name: 'NVIDIA GeForce RTX 3090',
    about: 'Ampere GA102, compute capability 8.6, PCIe 4.0 x16, 24 GB GDDR6X',
    memoryBandwidthBytesPerSec: n(936e9, 'B/s', 'spec', 'NVIDIA Ampere GA102 GPU Architecture whitepaper: 384-bit GDDR6X at 19.5 Gbps = 936 GB/s'),
    tensorFlopsFp16Acc32: n(71e12, 'FLOP/s', 'spec', 'NVIDIA Ampere GA102 GPU Architecture whitepaper: peak FP16 tensor TFLOPS with FP32 accumulate 71 dense (142 sparse); half rate on GeForce'),
    deviceMemoryBytes: deviceMemory(24),
    pcieBytesPerSec: PCIE4,
    pcieCopyOverheadMs: COPY_OVERHEAD,
  },
  RTX4090,
  {
    key: 'l40s',
    name: 'NVIDIA L40S',
    about: 'Ada Lovelace AD102, compute capability 8.9, PCIe 4.0 x16, 48 GB GDDR6 with ECC',
    memoryBandwidthBytesPerSec: n(864e9, 'B/s', 'spec', 'NVIDIA L40S GPU datasheet: 48 GB GDDR6, 864 GB/s'),
    tensorFlopsFp16Acc32: n(362.05e12, 'FLOP/s', 'spec', 'NVIDIA L40S GPU datasheet: FP16 tensor 362.05 TFLOPS dense (733 sparse); the sheet does not name the accumulate precision, and data-centre Ada parts do not halve FP32 accumulate as GeForce does (Ada whitepaper), so taken as the FP32-accumulate rate'),
    deviceMemoryBytes: deviceMemory(48, '; with ECC on, GDDR6 gives up a share of it, which is not modelled'),
    pcieBytesPerSec: PCIE4,
    pcieCopyOverheadMs: COPY_OVERHEAD,
  },
  {
    key: 'a100-40gb',
    name: 'NVIDIA A100-SXM4-40GB',
    about: 'Ampere GA100, compute capability 8.0, PCIe 4.0 host link, 40 GB HBM2',
    memoryBandwidthBytesPerSec: n(1555e9, 'B/s', 'spec', 'NVIDIA A100 Tensor Core GPU datasheet: A100 40GB, 1,555 GB/s'),
    tensorFlopsFp16Acc32: n(312e12, 'FLOP/s', 'spec', 'NVIDIA A100 Tensor Core GPU Architecture whitepaper: peak FP16 tensor TFLOPS with FP32 accumulate 312 dense (624 sparse)'),
    deviceMemoryBytes: deviceMemory(40),
    pcieBytesPerSec: PCIE4,
    pcieCopyOverheadMs: COPY_OVERHEAD,
  },
  {
    key: 'h100-80gb',
    name: 'NVIDIA H100 80GB HBM3',
    about: 'Hopper GH100 (SXM5), compute capability 9.0, PCIe 5.0 x16 host link, 80 GB HBM3',
    memoryBandwidthBytesPerSec: n(3.35e12, 'B/s', 'spec', 'NVIDIA H100 Tensor Core GPU datasheet: H100 SXM, 80 GB, 3.35 TB/s'),
    tensorFlopsFp16Acc32: n(989.4e12, 'FLOP/s', 'spec', 'NVIDIA H100 Tensor Core GPU Architecture whitepaper: H100 SXM5 peak FP16 tensor TFLOPS with FP32 accumulate 989.4 dense (1978.9 sparse; the datasheet prints the sparse 1,979)'),
    deviceMemoryBytes: deviceMemory(80),
    pcieBytesPerSec: n(50e9, 'B/s', 'measured', 'vLLM KV-offloading blog (2026-01-08): single-direction host↔device copies on H100 reach about 50 GB/s (sim-calibration C)'),
    pcieCopyOverheadMs: COPY_OVERHEAD,
  },
];

/** One model row: config.json shapes plus quantisation. */
export interface ModelRow {
  /** File-name suffix, e.g. `qwen2.5-7b-instruct-awq`. */
  key: string;
  /** Hub id (also the simulator's served model name). */
  name: string;
  quantization: 'gptq-int4' | 'awq-int4' | 'fp16';
  /** Where the shapes were read. */
  configSource: string;
  numLayers: number;
  numQueryHeads: number;
  numKvHeads: number;
  headDim: number;
  hiddenSize: number;
  intermediateSize: number;
  vocabSize: number;
  maxPositionEmbeddings: number;
  /** Quantisation group size (weights per fp16 scale and int4 zero); undefined for fp16. */
  groupSize?: number;
}

const QWEN7B = { numLayers: 28, numQueryHeads: 28, numKvHeads: 4, headDim: 128, hiddenSize: 3584, intermediateSize: 18944, vocabSize: 152064, maxPositionEmbeddings: 32768 };
const QWEN14B = { numLayers: 48, numQueryHeads: 40, numKvHeads: 8, headDim: 128, hiddenSize: 5120, intermediateSize: 13824, vocabSize: 152064, maxPositionEmbeddings: 32768 };
const hub = (id: string, q: string) => `config.json of ${id} on the Hugging Face Hub (the same file on ModelScope as qwen/${id.split('/')[1]})${q}`;

/** The four models. The first is the default's. */
export const MODELS: readonly ModelRow[] = [
  { key: 'qwen2.5-7b-instruct-gptq-int4', name: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4', quantization: 'gptq-int4', configSource: hub('Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4', ', quantization_config bits 4, group_size 128'), ...QWEN7B, groupSize: 128 },
  { key: 'qwen2.5-7b-instruct-awq', name: 'Qwen/Qwen2.5-7B-Instruct-AWQ', quantization: 'awq-int4', configSource: hub('Qwen/Qwen2.5-7B-Instruct-AWQ', ', quantization_config w_bit 4, q_group_size 128, zero_point true'), ...QWEN7B, groupSize: 128 },
  { key: 'qwen2.5-7b-instruct-fp16', name: 'Qwen/Qwen2.5-7B-Instruct', quantization: 'fp16', configSource: hub('Qwen/Qwen2.5-7B-Instruct', ' (torch_dtype bfloat16: 2 bytes per weight, as fp16)'), ...QWEN7B },
  { key: 'qwen2.5-14b-instruct-gptq-int4', name: 'Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4', quantization: 'gptq-int4', configSource: hub('Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4', ', quantization_config bits 4, group_size 128'), ...QWEN14B, groupSize: 128 },
];

/** The default pair's model block, unchanged (its bytes are the rounded figures of sim-calibration.md §0). */
export const DEFAULT_MODEL_BLOCK = {
  name: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
  quantization: 'gptq-int4',
  numLayers: n(28, 'count', 'config', 'config.json num_hidden_layers (inference-sim model_configs/qwen2.5-7b-instruct)'),
  numQueryHeads: n(28, 'count', 'config', 'config.json num_attention_heads'),
  numKvHeads: n(4, 'count', 'config', 'config.json num_key_value_heads'),
  headDim: n(128, 'count', 'config', 'config.json hidden_size / num_attention_heads = 3584 / 28'),
  hiddenSize: n(3584, 'count', 'config', 'config.json hidden_size'),
  vocabSize: n(152064, 'tokens', 'config', 'config.json vocab_size'),
  maxPositionEmbeddings: n(32768, 'tokens', 'config', 'config.json max_position_embeddings (the default --max-model-len)'),
  linearParams: n(6.525e9, 'params', 'derived', '28 × 233.05M per layer (rounded; notes give the formula and its exact result)'),
  linearWeightBytes: n(3.39e9, 'B', 'derived', 'int4 3.26 GB + fp16 scales 0.10 + int4 zeros 0.03 (group 128), rounded; notes give the formula and its exact result'),
  lmHeadBytes: n(1.09e9, 'B', 'derived', '152064 × 3584 × 2 B, unquantised fp16 lm_head (1,089,994,752, rounded)'),
  weightsInVramBytes: n(5.2 * GiB, 'B', 'measured', '5.58 GB safetensors (HF file list); ≈5.2 GiB in VRAM'),
  activationReserveBytes: n(1.4 * GiB, 'B', 'measured', '1.2–1.6 GiB measured range (the Llama-8B 4090 run left 1.15 GiB); middle of the range'),
  kvDtypeBytes: n(2, 'B/element', 'code', 'fp16 KV cache (cache_dtype auto)'),
};

/** The default pair's perf block, unchanged: the efficiencies every other profile carries over. */
export const DEFAULT_PERF_BLOCK = {
  etaWeights: n(0.85, 'fraction', 'measured', 'Marlin at small batch 0.75–0.9 (measured range); bf16 GEMV measured 0.87–0.94'),
  etaLmHead: n(0.93, 'fraction', 'measured', 'lm_head GEMV at 957 GB/s'),
  etaKv: n(0.9, 'fraction', 'measured', 'decode attention 0.8–0.95 TB/s of KV reads (LLMServingSim 4090 profile)'),
  gemmFlops: n(160e12, 'FLOP/s', 'measured', 'large bf16 GEMM 158–166 TFLOPS'),
  marlinFlops: n(0.85 * 160e12, 'FLOP/s', 'derived', '0.85 × gemmFlops; Marlin saturates below fp16 cuBLAS (vLLM PR #2497)'),
  attnFlops: n(100e12, 'FLOP/s', 'measured', 'flash-attention prefill ≈100 TFLOPS'),
  stepOverheadMs: n(1.5, 'ms', 'derived', 'V1 + CUDA graphs ≈1–2.5 ms; BLIS fit ≈1.0 ms; 1.5 ms reproduces 150 tok/s single stream'),
  perSeqOverheadMs: n(0.0045, 'ms', 'measured', 'BLIS β6 fit ≈4–5 µs per request'),
  swapCopiesPerBlock: n(2 * 28, 'count', 'code', 'pre-0.12 layout: 2 (K,V) × 28 layers fragments of 16 KiB per 16-token block'),
  apiOverheadMs: n(3, 'ms', 'estimate', '2–10 ms HTTP + tokenize + detokenize on a desktop CPU (sim-calibration A6.10)'),
};
