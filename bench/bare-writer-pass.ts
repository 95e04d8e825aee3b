/**
 * The simulator's floor, measured (bench/sim-yardstick.ts): the simulator's own chunk bytes for a short stream, and a
 * pass of the bare writer (bench/bare-writer.ts) in its own process that writes them to C streams, with its CPU per
 * token over a steady window and over the whole pass.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from '../src/client/client';
import { spawnChild } from '../src/proc/child';
import type { SimHandle } from '../src/sim/start';
import { BARE_WRITER_MARKER, type BareWriterConfig } from './bare-writer';
import { procCpuMs, round } from './common';
import { splitCores } from './cpu-split';

/** The simulator's own SSE events for a short fixed-output chat stream, as our client asks for it. */
export async function captureChunks(sim: SimHandle, gapMs: number): Promise<BareWriterConfig> {
  const res = await fetch(`${sim.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: sim.model,
      messages: [{ role: 'user', content: 'Say anything.' }],
      max_tokens: 5,
      ignore_eos: true,
      min_tokens: 5,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    }),
  });
  const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]');
  const role = events.find((e) => e.includes('"role"'));
  const usage = [...events].reverse().find((e) => e.includes('"choices":[]'));
  if (!role || !usage || events.length < 5)
    throw new Error(`sim yardstick: unexpected stream from the simulator: ${events.join(' | ')}`);
  return { role: `${role}\n\n`, token: `${events[2]}\n\n`, usage: `${usage}\n\n`, gapMs };
}

/** The bare writer in its own process, its URL, and how many token chunks it has written so far (its `/count`). */
export async function startBareWriter(cfg: BareWriterConfig) {
  const child = await spawnChild({
    entry: 'bench/bare-writer.ts',
    env: { LOADLAB_BARE_WRITER: JSON.stringify(cfg) },
    marker: BARE_WRITER_MARKER,
    name: 'the bare writer',
    graceMs: 1000,
  });
  const baseUrl = `http://127.0.0.1:${Number(child.payload)}`;
  const written = async () => Number(await (await fetch(`${baseUrl}/count`)).text());
  return { child, baseUrl, written };
}

/** Time the bare writer's streams get to open and start writing before its window opens, ms. */
export const BARE_RAMP_MS = 1500;

/**
 * The bare writer at `cfg.gapMs`: C streams × `tokens`. Its CPU µs per token over a steady window of `windowS`
 * (every stream open and writing; the token chunks it wrote in the window, from its `/count`), as the simulator's
 * is taken over its steady window; and over the whole pass (the streams' requests, start and end included), the
 * figure this yardstick judged before §26 of bench/README.md. `tokens` must outlast the ramp and the window.
 */
export async function bareWriterPass(cfg: BareWriterConfig, c: number, tokens: number, windowS: number) {
  const { child: w, baseUrl, written } = await startBareWriter(cfg);
  const split = splitCores(w.pid); // where the simulator's engine thread goes, when the cores are split (./cpu-split)
  try {
    const client = createClient({ baseUrl, model: 'bare', connections: c });
    const spec = (n: number) => ({ messages: [{ role: 'user' as const, content: 'hi' }], maxTokens: n });
    await Promise.all(Array.from({ length: c }, (_, i) => client.send(spec(2), { index: i, intendedStartMs: 0 })));
    const start = { cpuMs: procCpuMs(w.pid), n: await written() };
    const pass = Promise.all(Array.from({ length: c }, (_, i) => client.send(spec(tokens), { index: i, intendedStartMs: 0 })));
    await sleep(BARE_RAMP_MS);
    const from = { cpuMs: procCpuMs(w.pid), n: await written() };
    await sleep(windowS * 1000);
    const to = { cpuMs: procCpuMs(w.pid), n: await written() };
    const recs = await pass;
    const end = { cpuMs: procCpuMs(w.pid), n: await written() };
    await client.close();
    const perToken = (a: typeof from, b: typeof from) => round(((b.cpuMs - a.cpuMs) * 1000) / Math.max(1, b.n - a.n), 2);
    return {
      streams: c,
      tokens,
      gapMs: cfg.gapMs,
      received: recs.reduce((a, r) => a + r.chunkMs.length, 0),
      ok: recs.filter((r) => r.ok).length,
      windowS,
      windowTokens: to.n - from.n,
      cpuMs: to.cpuMs - from.cpuMs,
      usPerToken: perToken(from, to),
      wholePassUsPerToken: perToken(start, end),
    };
  } finally {
    split.release();
    await w.stop();
  }
}
