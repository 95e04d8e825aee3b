/** Warnings about `vllm serve` arguments that start but slow the lessons down. */

/**
 * Warnings about `vllm serve` arguments that start but slow the lessons down (pure; `[]` when
 * none). Today one: `--quantization gptq` (or `-q gptq`, `--quantization=gptq`). For a GPTQ
 * checkpoint vLLM picks the Marlin kernel itself; an explicit `gptq` makes
 * `GPTQMarlinConfig.override_quantization_method` (vllm/model_executor/layers/quantization/gptq_marlin.py)
 * log "…you specified quantization=gptq explicitly, so forcing gptq" and keep the slower
 * non-Marlin kernel, so TPOT no longer matches the lessons' roofline. (vLLM PR #38288, 2026-03,
 * later maps `gptq` to the Marlin config; leaving the flag out is right on every version.)
 */
export function serveArgWarnings(argv: readonly string[]): string[] {
  const warnings: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = a === '--quantization' || a === '-q' ? argv[i + 1] : a.startsWith('--quantization=') ? a.slice(15) : undefined;
    if (value === 'gptq') {
      warnings.push(
        "`--quantization gptq` forces vLLM's slower non-Marlin GPTQ kernel (vllm/model_executor/layers/quantization/gptq_marlin.py, " +
          'override_quantization_method); drop the flag: vLLM picks gptq_marlin for this model by itself.',
      );
    }
  }
  return warnings;
}
