import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startGpuSampler } from '../src/observe/gpu';
import { createDmonReader, parseGpuQueryLine } from '../src/observe/gpu-parse';

const FAKE = join(__dirname, 'fixtures', 'nvidia-smi');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = mkdtempSync(join(tmpdir(), 'loadlab-gpu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Live processes whose command line mentions `needle` (`pid cmdline`). */
function processesMentioning(needle: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (!stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z') && cmd.includes(needle)) found.push(`${pid} ${cmd}`);
    } catch {
      // exited while we looked
    }
  }
  return found;
}

describe('nvidia-smi output parsers', () => {
  it('reads --query-gpu CSV rows (nounits), [N/A] fields left out', () => {
    expect(parseGpuQueryLine('0, 87, 20345, 24564, 312.45', 10)).toEqual({
      tMs: 10,
      gpu: 0,
      utilPct: 87,
      memUsedMiB: 20345,
      memTotalMiB: 24564,
      powerW: 312.45,
    });
    expect(parseGpuQueryLine('1, 0, 3, 24564, [N/A]', 0)).toEqual({
      tMs: 0,
      gpu: 1,
      utilPct: 0,
      memUsedMiB: 3,
      memTotalMiB: 24564,
    });
    expect(parseGpuQueryLine("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.", 0)).toBeUndefined();
    expect(parseGpuQueryLine('0, [N/A], [N/A], [N/A], [N/A]', 0)).toBeUndefined();
  });

  it('reads dmon -s t rows by header names, through repeated headers, "-" and a time column', () => {
    const r = createDmonReader();
    expect(r.line('# gpu   rxpci   txpci ', 0)).toBeUndefined();
    expect(r.line('# Idx    MB/s    MB/s ', 0)).toBeUndefined();
    expect(r.line('    0     112      37 ', 5)).toEqual({ tMs: 5, gpu: 0, pcieRxMBps: 112, pcieTxMBps: 37 });
    expect(r.line('    1       -      4 ', 6)).toEqual({ tMs: 6, gpu: 1, pcieTxMBps: 4 });
    const t = createDmonReader();
    t.line('#Time        gpu   rxpci   txpci ', 0);
    t.line('#HH:MM:SS    Idx    MB/s    MB/s ', 0);
    expect(t.line(' 10:00:01      0     900     20 ', 7)).toEqual({ tMs: 7, gpu: 0, pcieRxMBps: 900, pcieTxMBps: 20 });
  });
});

describe('startGpuSampler', () => {
  it('records util/mem/power rows and PCIe rows from the stand-in nvidia-smi, on the run clock', async () => {
    const file = join(dir, 'run', 'gpu.jsonl');
    const origin = performance.now();
    const logs: string[] = [];
    const g = startGpuSampler({
      bin: FAKE,
      intervalMs: 50,
      now: () => performance.now() - origin,
      file,
      log: (l) => logs.push(l),
    });
    expect(g.available).toBe(true);
    await sleep(600);
    const samples = await g.stop();
    const query = samples.filter((s) => s.utilPct !== undefined);
    const pcie = samples.filter((s) => s.pcieRxMBps !== undefined);
    expect(query.length).toBeGreaterThanOrEqual(3);
    expect(pcie.length).toBeGreaterThanOrEqual(1);
    expect(query[0]).toMatchObject({ gpu: 0, utilPct: 0, memUsedMiB: 20345, memTotalMiB: 24564, powerW: 312.45 });
    expect(query[1].utilPct).toBe(7);
    expect(pcie[0]).toMatchObject({ gpu: 0, pcieRxMBps: 100, pcieTxMBps: 30 });
    expect(pcie[0].utilPct).toBeUndefined(); // rows are never merged or filled in
    for (const list of [query, pcie])
      for (let i = 1; i < list.length; i++) expect(list[i].tMs).toBeGreaterThanOrEqual(list[i - 1].tMs);
    expect(samples.every((s) => s.tMs >= 0 && s.tMs < 2000)).toBe(true);
    expect(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(samples);
    expect(logs).toEqual([]);
    expect(g.stop()).toBeInstanceOf(Promise);
  });

  it('finds nvidia-smi on PATH, handles several GPUs, and leaves no process after stop', async () => {
    const binDir = mkdtempSync(join(dir, 'bin-'));
    copyFileSync(FAKE, join(binDir, 'nvidia-smi'));
    const path = process.env.PATH;
    process.env.PATH = `${binDir}:${path}`;
    process.env.FAKE_NVSMI_GPUS = '2';
    let g;
    try {
      g = startGpuSampler({ intervalMs: 50, pcie: false, log: () => undefined });
    } finally {
      process.env.PATH = path;
      delete process.env.FAKE_NVSMI_GPUS;
    }
    await sleep(300);
    expect(processesMentioning(binDir).length).toBeGreaterThanOrEqual(1);
    const samples = await g.stop();
    expect(new Set(samples.map((s) => s.gpu))).toEqual(new Set([0, 1]));
    expect(processesMentioning(binDir)).toEqual([]);
  });

  it('says once that nvidia-smi is absent, records nothing and never throws', async () => {
    const logs: string[] = [];
    const g = startGpuSampler({
      bin: 'nvidia-smi-not-installed-here',
      log: (l) => logs.push(l),
      file: join(dir, 'absent', 'gpu.jsonl'),
    });
    expect(g.available).toBe(false);
    expect(g.reason).toMatch(/not found on PATH/);
    expect(logs).toHaveLength(1);
    expect(await g.stop()).toEqual([]);
    expect(readdirSync(dir)).not.toContain('absent');
  });

  it('reports a broken driver once (nvidia-smi exits) and records nothing', async () => {
    const logs: string[] = [];
    process.env.FAKE_NVSMI_FAIL = '1';
    let g;
    try {
      g = startGpuSampler({ bin: FAKE, intervalMs: 50, log: (l) => logs.push(l) });
    } finally {
      delete process.env.FAKE_NVSMI_FAIL;
    }
    await sleep(400);
    expect(g.available).toBe(false);
    expect(g.reason).toMatch(/exit code 9.*couldn't communicate with the NVIDIA driver/);
    expect(logs).toHaveLength(1);
    expect(await g.stop()).toEqual([]);
  });
});
