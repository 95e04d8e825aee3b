/**
 * The client's own cost per token event, without sockets: vLLM-shaped chat token chunks (one
 * SSE event per network chunk, as at 128 streams × 10 ms gaps) fed as Buffers through
 * `StreamTimer.feed` (UTF-8 decode, SSE, chunk reading, stamp arrays) for `streams` interleaved
 * streams, then `toRecord`. Prints µs per event, allocations seen as GC (scavenges and their
 * total ms, from perf_hooks 'gc' entries) and the load average. A cost figure, never a latency.
 * Run: `npx tsx bench/event-cost.ts [events=300000] [streams=128]` (not part of `npm run bench`).
 */
import { loadavg } from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import { StreamTimer } from '../src/client/timing';
import { chunkHead, chunkJson, sseData, usageJson } from '../src/wire/chunks';

const events = Number(process.argv[2] ?? 300_000);
const streams = Number(process.argv[3] ?? 128);
const perStream = Math.ceil(events / streams);
const head = chunkHead({
  api: 'chat',
  id: 'chatcmpl-0123456789abcdef',
  created: 1764720000,
  model: 'Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4',
});
const words = [' the', ' load', ' tail', ' token', ' 吞吐', ' p99', ',', ' and'];
/** Token event k of a stream, as bytes (continuous usage, as LoadLab asks vLLM for it). */
const event = (k: number) =>
  Buffer.from(
    sseData(
      chunkJson(
        'chat',
        head,
        { text: words[k % words.length] },
        { usage: usageJson({ promptTokens: 512, completionTokens: k + 1 }) },
      ),
    ),
  );
const bytes = Array.from({ length: 64 }, (_, k) => event(k));

async function pass(): Promise<{ usPerEvent: number; scavenges: number; gcMs: number; tokens: number }> {
  const gcs: number[] = [];
  const obs = new PerformanceObserver((l) => {
    for (const e of l.getEntries()) gcs.push(e.duration);
  });
  obs.observe({ entryTypes: ['gc'] });
  const timers = Array.from({ length: streams }, () => new StreamTimer('chat', () => 0));
  const t0 = performance.now();
  for (let k = 0; k < perStream; k++) {
    const b = bytes[k % bytes.length];
    for (let s = 0; s < streams; s++) timers[s].feed(b, k);
  }
  let tokens = 0;
  for (const t of timers) {
    t.feed('data: [DONE]\n\n', perStream);
    tokens += t.toRecord({ index: 0, requestId: 'r', intendedStartMs: 0 }).chunkMs.length;
  }
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 20)); // GC entries arrive after the loop yields
  obs.disconnect();
  return { usPerEvent: (ms * 1000) / (perStream * streams), scavenges: gcs.length, gcMs: gcs.reduce((a, b) => a + b, 0), tokens };
}

async function main(): Promise<void> {
  await pass(); // warm-up: JIT
  for (let i = 0; i < 3; i++) {
    const r = await pass();
    console.log(
      `StreamTimer: ${r.usPerEvent.toFixed(3)} µs/event over ${perStream * streams} events (${r.tokens} token chunks), ` +
        `${r.scavenges} GCs, ${r.gcMs.toFixed(1)} ms GC [load ${loadavg()[0].toFixed(2)}]`,
    );
  }
}

void main();
