/**
 * Parsers for the two `nvidia-smi` outputs the GPU sampler reads. Pure; one line at a time.
 *
 * 1. `nvidia-smi --query-gpu=index,utilization.gpu,memory.used,memory.total,power.draw
 *    --format=csv,noheader,nounits -lms N` prints one line per GPU per period:
 *    `0, 87, 20345, 24564, 312.45` (index, %, MiB, MiB, W). A field the GPU cannot report
 *    reads `[N/A]` or `[Not Supported]`.
 * 2. `nvidia-smi dmon -s t` prints two header lines and then one row per GPU per second:
 *    ```
 *    # gpu   rxpci   txpci
 *    # Idx    MB/s    MB/s
 *        0     112      37
 *    ```
 *    The headers repeat from time to time; a value it cannot read is `-`. Columns are found by
 *    name, so extra columns (`-o T` adds a time column) do not confuse it.
 */
import type { GpuSample } from '../types';

/** The `--query-gpu` fields the sampler asks for, in order. */
export const GPU_QUERY_FIELDS = ['index', 'utilization.gpu', 'memory.used', 'memory.total', 'power.draw'] as const;

function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const t = s.trim();
  if (t === '' || t === '-' || t.startsWith('[') || /^n\/?a$/i.test(t)) return undefined;
  const v = Number(t);
  return Number.isFinite(v) ? v : undefined;
}

/**
 * One CSV line of the `--query-gpu` output (fields in `GPU_QUERY_FIELDS` order) as a sample at
 * `tMs`. Undefined for a line that is not such a row (a warning, an error message), so nothing
 * is ever invented from it.
 */
export function parseGpuQueryLine(line: string, tMs: number): GpuSample | undefined {
  const cols = line.split(',');
  if (cols.length !== GPU_QUERY_FIELDS.length) return undefined;
  const gpu = num(cols[0]);
  if (gpu === undefined || !Number.isInteger(gpu)) return undefined;
  const s: GpuSample = { tMs, gpu };
  const util = num(cols[1]);
  const used = num(cols[2]);
  const total = num(cols[3]);
  const power = num(cols[4]);
  if (util !== undefined) s.utilPct = util;
  if (used !== undefined) s.memUsedMiB = used;
  if (total !== undefined) s.memTotalMiB = total;
  if (power !== undefined) s.powerW = power;
  return util === undefined && used === undefined && total === undefined && power === undefined ? undefined : s;
}

/** A stateful reader of `nvidia-smi dmon -s t` output: feed it lines, get PCIe samples. */
export interface DmonReader {
  /** One output line; a data row becomes a sample at `tMs`, headers and anything else give undefined. */
  line(line: string, tMs: number): GpuSample | undefined;
}

/** Creates a `DmonReader`. Until a `# gpu … rxpci … txpci` header is seen, rows use dmon's default column order. */
export function createDmonReader(): DmonReader {
  let cols = { gpu: 0, rx: 1, tx: 2 };
  return {
    line(line, tMs) {
      const t = line.trim();
      if (t === '') return undefined;
      if (t.startsWith('#')) {
        const names = t
          .replace(/^#/, '')
          .trim()
          .split(/\s+/)
          .map((n) => n.toLowerCase());
        const gpu = names.indexOf('gpu');
        const rx = names.indexOf('rxpci');
        const tx = names.indexOf('txpci');
        if (gpu >= 0 && rx >= 0 && tx >= 0) cols = { gpu, rx, tx };
        return undefined;
      }
      const f = t.split(/\s+/);
      const gpu = num(f[cols.gpu]);
      if (gpu === undefined || !Number.isInteger(gpu)) return undefined;
      const rx = num(f[cols.rx]);
      const tx = num(f[cols.tx]);
      if (rx === undefined && tx === undefined) return undefined;
      const s: GpuSample = { tMs, gpu };
      if (rx !== undefined) s.pcieRxMBps = rx;
      if (tx !== undefined) s.pcieTxMBps = tx;
      return s;
    },
  };
}
