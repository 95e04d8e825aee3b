/**
 * Builds `profiles/<gpu>-<model>.json` (5 GPUs × 4 models) from `tables.ts`:
 *   node --import tsx profiles/make-profiles.ts          write the files
 *   node --import tsx profiles/make-profiles.ts --check  exit 1 if a checked-in file differs
 * The RTX 4090 + Qwen2.5-7B-Instruct-GPTQ-Int4 file keeps the default's numbers unchanged. Every
 * other pair is spec-derived: GPU numbers from vendor documents, model bytes from config.json shapes
 * (formula in the file's notes), efficiencies carried over from the RTX 4090 and labelled so.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROFILE_FORMAT, type SourcedNumber } from '../src/sim/engine/profile-schema';
import { DEFAULT_MODEL_BLOCK, DEFAULT_PERF_BLOCK, GPUS, MODELS, type GpuRow, type ModelRow, n, RTX4090 } from './tables';

const GiB = 1024 ** 3;
const STATUS = 'spec-derived, not calibrated';

/** Exact sizes from a model row's shapes (bytes, params). */
export function modelSizes(m: ModelRow): { linearParams: number; linearWeightBytes: number; lmHeadBytes: number; weightsInVramBytes: number } {
  const h = m.hiddenSize;
  const q = m.numQueryHeads * m.headDim;
  const kv = m.numKvHeads * m.headDim;
  const linearParams = m.numLayers * (h * q + 2 * h * kv + q * h + 3 * h * m.intermediateSize);
  const linearWeightBytes = m.groupSize ? linearParams * 0.5 + (linearParams / m.groupSize) * (2 + 0.5) : linearParams * 2;
  const lmHeadBytes = m.vocabSize * h * 2;
  const biasAndNorm = m.numLayers * (q + 2 * kv) * 2 + (2 * m.numLayers + 1) * h * 2;
  return { linearParams, linearWeightBytes, lmHeadBytes, weightsInVramBytes: linearWeightBytes + 2 * lmHeadBytes + biasAndNorm };
}

function formulaNotes(m: ModelRow): string[] {
  const s = modelSizes(m);
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    'linearParams = L·(h·q + 2·h·kv + q·h + 3·h·I) with q = n_heads·head_dim, kv = n_kv_heads·head_dim, I = intermediate_size ' +
      `(q, k, v, o and the gate/up/down MLP projections): ${fmt(s.linearParams)} for ${m.name}.`,
    m.groupSize
      ? `linearWeightBytes = P·0.5 (int4) + (P/${m.groupSize})·(2 B fp16 scale + 0.5 B int4 zero) per group of ${m.groupSize}: ${fmt(s.linearWeightBytes)} B ` +
        '(g_idx and packing padding ignored).'
      : `linearWeightBytes = P·2 (16-bit weights): ${fmt(s.linearWeightBytes)} B.`,
    `lmHeadBytes = vocab·h·2 (lm_head stays 16-bit): ${fmt(s.lmHeadBytes)} B. weightsInVramBytes = linear + embedding + lm_head ` +
      `(untied, 16-bit) + q/k/v biases + RMSNorm weights: ${fmt(s.weightsInVramBytes)} B (${(s.weightsInVramBytes / GiB).toFixed(2)} GiB).`,
  ];
}

function modelBlock(m: ModelRow): Record<string, unknown> {
  if (m.key === MODELS[0].key) return DEFAULT_MODEL_BLOCK;
  const s = modelSizes(m);
  const cfg = (field: string) => `config.json ${field} (file named in notes)`;
  return {
    name: m.name,
    quantization: m.quantization,
    numLayers: n(m.numLayers, 'count', 'config', cfg('num_hidden_layers')),
    numQueryHeads: n(m.numQueryHeads, 'count', 'config', cfg('num_attention_heads')),
    numKvHeads: n(m.numKvHeads, 'count', 'config', cfg('num_key_value_heads')),
    headDim: n(m.headDim, 'count', 'config', cfg(`hidden_size / num_attention_heads = ${m.hiddenSize} / ${m.numQueryHeads}`)),
    hiddenSize: n(m.hiddenSize, 'count', 'config', cfg('hidden_size')),
    vocabSize: n(m.vocabSize, 'tokens', 'config', cfg('vocab_size')),
    maxPositionEmbeddings: n(m.maxPositionEmbeddings, 'tokens', 'config', cfg('max_position_embeddings (the default --max-model-len)')),
    linearParams: n(s.linearParams, 'params', 'derived', `from config.json shapes (intermediate_size ${m.intermediateSize}); formula in notes`),
    linearWeightBytes: n(s.linearWeightBytes, 'B', 'derived', `${m.quantization}; formula in notes`),
    lmHeadBytes: n(s.lmHeadBytes, 'B', 'derived', `${m.vocabSize} × ${m.hiddenSize} × 2 B, 16-bit lm_head`),
    weightsInVramBytes: n(s.weightsInVramBytes, 'B', 'derived', 'sum of the stored tensors; formula in notes (not measured)'),
    activationReserveBytes: n(
      1.4 * GiB,
      'B',
      'carried-over',
      `the RTX 4090 + Qwen2.5-7B-Instruct-GPTQ-Int4 figure (1.2–1.6 GiB measured range, middle) carried over` +
        (m.hiddenSize > 3584 ? '; a larger model\'s profiling run peaks higher, so the KV cache here is likely a little too large' : ''),
    ),
    kvDtypeBytes: n(2, 'B/element', 'code', '16-bit KV cache (cache_dtype auto)'),
  };
}

/** Round a derived value to 4 significant digits. */
const sig4 = (x: number) => Number(x.toPrecision(4));

function carried(x: SourcedNumber, gpu: GpuRow): SourcedNumber {
  return gpu === RTX4090 ? x : n(x.value, x.unit, 'carried-over', `the RTX 4090 value carried over, not measured on this GPU (4090: ${x.note})`);
}

function perfBlock(gpu: GpuRow, m: ModelRow): Record<string, SourcedNumber> {
  const p = DEFAULT_PERF_BLOCK;
  if (gpu === RTX4090 && m.key === MODELS[0].key) return p;
  const on4090 = gpu === RTX4090;
  const scale = (x: SourcedNumber, what: string) =>
    on4090
      ? x
      : n(sig4((x.value / RTX4090.tensorFlopsFp16Acc32.value) * gpu.tensorFlopsFp16Acc32.value), 'FLOP/s', 'carried-over',
          `the RTX 4090's ${what} share of its spec (${x.value / 1e12} of 165.2 TFLOPS) applied to this GPU's spec; not measured (4090: ${x.note})`);
  const gemm = scale(p.gemmFlops, 'large-GEMM');
  const fp16 = m.quantization === 'fp16';
  const etaWeights = fp16
    ? n(0.9, 'fraction', on4090 ? 'measured' : 'carried-over', `16-bit weights: the RTX 4090's bf16 GEMV measured 0.87–0.94 (sim-calibration §0), middle${on4090 ? '' : '; carried over, not measured on this GPU'}`)
    : carried(p.etaWeights, gpu);
  const marlin = fp16
    ? n(gemm.value, 'FLOP/s', 'derived', 'equal to gemmFlops: 16-bit linear layers run on cuBLAS, not Marlin')
    : n(sig4(0.85 * gemm.value), 'FLOP/s', 'derived', '0.85 × gemmFlops; Marlin saturates below fp16 cuBLAS (vLLM PR #2497)');
  const extraLayers = m.numLayers - 28;
  const step = extraLayers
    ? n(sig4(p.stepOverheadMs.value + extraLayers * 0.032), 'ms', 'derived', `the RTX 4090 1.5 ms for 28 layers + 32 µs per extra layer (BLIS fit: 0.13 ms + 32 µs × layers), ${m.numLayers} layers`)
    : carried(p.stepOverheadMs, gpu);
  return {
    etaWeights,
    etaLmHead: carried(p.etaLmHead, gpu),
    etaKv: carried(p.etaKv, gpu),
    gemmFlops: gemm,
    marlinFlops: marlin,
    attnFlops: scale(p.attnFlops, 'flash-attention prefill'),
    stepOverheadMs: step,
    perSeqOverheadMs: carried(p.perSeqOverheadMs, gpu),
    swapCopiesPerBlock: n(2 * m.numLayers, 'count', 'code', `pre-0.12 layout: 2 (K,V) × ${m.numLayers} layers fragments per block`),
    apiOverheadMs: carried(p.apiOverheadMs, gpu),
  };
}

function kernelNote(gpu: GpuRow, m: ModelRow): string[] {
  const out: string[] = [];
  if (m.quantization === 'awq-int4') {
    out.push(
      'vLLM converts a compatible AWQ checkpoint to its awq_marlin kernel (override_quantization_method in vllm/model_executor/layers/quantization/awq_marlin.py); every GPU here is above its minimum compute capability, so the Marlin efficiencies apply.',
    );
  }
  if (m.quantization !== 'fp16' && gpu.key.startsWith('h100')) {
    out.push('On compute capability 9.0 vLLM prefers the Machete kernel to Marlin where it supports the layout (vllm/model_executor/kernels/linear/__init__.py, _POSSIBLE_KERNELS); Marlin\'s efficiencies carried over are a guess.');
  }
  return out;
}

/** The document of one GPU + model pair. */
export function buildProfile(gpu: GpuRow, m: ModelRow): Record<string, unknown> {
  const isDefault = gpu === RTX4090 && m.key === MODELS[0].key;
  const { key: _k, about, ...gpuBlock } = gpu;
  return {
    format: PROFILE_FORMAT,
    id: `${gpu.key}-${m.key}`,
    status: STATUS,
    description: `${gpu.name} serving ${m.name} under vLLM V1 (CUDA graphs)${isDefault ? ': the simulator\'s default profile' : ''}.`,
    gpu: gpuBlock,
    model: modelBlock(m),
    perf: perfBlock(gpu, m),
    notes: [
      isDefault
        ? 'Spec-derived, not calibrated: vendor specs plus other people\'s published measurements of RTX 4090s (shared/reference/sim-calibration.md); never fitted to a LoadLab run. These are the numbers the simulator has always used.'
        : 'Spec-derived, not calibrated: GPU numbers from vendor documents, model shapes from config.json, serving efficiencies carried over from the RTX 4090 profile; never fitted to a run on this GPU.',
      `GPU: ${about}.`,
      `Model shapes: ${m.configSource}.`,
      ...formulaNotes(m),
      ...kernelNote(gpu, m),
    ],
  };
}

/** JSON text with 2-space indent; values of up to 4 significant digits in exponent form (1.008e12). */
export function toProfileJson(doc: unknown): string {
  const text = JSON.stringify(doc, null, 2).replace(/"value": (-?[0-9.eE+-]+)/g, (all, num: string) => {
    const v = Number(num);
    const e = v.toExponential().replace('e+', 'e');
    const mantissaDigits = e.split('e')[0].replace(/[-.]/g, '').length;
    return Math.abs(v) >= 1e6 && mantissaDigits <= 4 && Number(e) === v ? `"value": ${e}` : all;
  });
  return `${text}\n`;
}

/** Every shipped profile: file name → text. */
export function buildAll(): Map<string, string> {
  const out = new Map<string, string>();
  for (const g of GPUS) for (const m of MODELS) out.set(`${g.key}-${m.key}.json`, toProfileJson(buildProfile(g, m)));
  return out;
}

function main(argv: string[]): number {
  const dir = join(process.cwd(), 'profiles');
  let stale = 0;
  for (const [file, text] of buildAll()) {
    const path = join(dir, file);
    let old = '';
    try {
      old = readFileSync(path, 'utf8');
    } catch {}
    if (old === text) continue;
    stale++;
    if (argv.includes('--check')) console.error(`profiles/${file} differs from make-profiles.ts output`);
    else writeFileSync(path, text);
  }
  console.log(argv.includes('--check') ? `${stale} file(s) differ` : `wrote ${stale} file(s)`);
  return argv.includes('--check') && stale ? 1 : 0;
}

if (/make-profiles\.ts$/.test(process.argv[1] ?? '')) process.exitCode = main(process.argv.slice(2));
