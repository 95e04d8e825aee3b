/**
 * Parsing and stats throughput, no sockets: what one SSE event costs in the client's stream
 * timer (stamp + UTF-8 decode + SSE split + JSON.parse + bookkeeping), split into its layers, and
 * how long the statistics take over 100k samples.
 *
 * Input: 100,000 vLLM chat chunks with continuous usage (as the simulator and vLLM send them to
 * the LoadLab client, ~330 bytes each), fed (a) one event per network chunk — what a paced
 * server produces, one TCP read per token — and (b) in 16 KiB slices (a flat-out stream).
 * Ideal: a few µs per event, i.e. well under 10 % of one core at 30,000 events/s.
 */

import { createParser } from 'eventsource-parser';
import { StringDecoder } from 'node:string_decoder';
import { StreamTimer } from '../src/client/timing';
import { bootstrapPercentileCI } from '../src/stats/bootstrap';
import { summarizeLatency } from '../src/stats/percentile';
import { seededRng, randExp } from '../src/rng';
import { loadLine, machine, round, type BenchResult } from './common';

const EVENTS = 100_000;
const STREAM_EVENTS = 1000; // events per simulated response (a new StreamTimer each)

/** One response's bytes: role chunk, `n` token chunks with continuous usage, usage chunk, [DONE]. */
function responseEvents(n: number): Buffer[] {
  const head =
    '{"id":"chatcmpl-ll-1a2b3c4d-17","object":"chat.completion.chunk","created":1764672000,"model":"Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4"';
  const usage = (k: number) => `"usage":{"prompt_tokens":512,"total_tokens":${512 + k},"completion_tokens":${k}}`;
  const out: string[] = [
    `data: ${head},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],${usage(0)},"prompt_token_ids":null}\n\n`,
  ];
  for (let k = 1; k <= n; k++) {
    const fin = k === n ? ',"finish_reason":"length","stop_reason":null' : ',"finish_reason":null';
    out.push(
      `data: ${head},"choices":[{"index":0,"delta":{"content":" token"},"logprobs":null${fin},"token_ids":null}],${usage(k)}}\n\n`,
    );
  }
  out.push(`data: ${head},"choices":[],${usage(n)}}\n\n`, 'data: [DONE]\n\n');
  return out.map((s) => Buffer.from(s, 'utf8'));
}

/** Concatenate and re-slice into `size`-byte chunks. */
function slices(events: Buffer[], size: number): Buffer[] {
  const all = Buffer.concat(events);
  const out: Buffer[] = [];
  for (let i = 0; i < all.length; i += size) out.push(all.subarray(i, i + size));
  return out;
}

/** Best of `reps` timings of `fn`, ns per event. */
function nsPerEvent(fn: () => void, events: number, reps = 5): number {
  let best = Infinity;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return round((best * 1e6) / events, 0);
}

/** Keeps the timed work observable, so the JIT cannot drop it. */
let sink = 0;

/** ns per event of the stream timer (one event per chunk, and 16 KiB chunks) and of each layer under it. */
function measureParse(perResponse: Buffer[], responses: number) {
  const big = slices(perResponse, 16 * 1024);
  const now = () => performance.now();
  const timerRun = (chunks: Buffer[]) => () => {
    for (let r = 0; r < responses; r++) {
      const st = new StreamTimer('chat', now);
      st.sent(0);
      st.headers(200, 0);
      for (const c of chunks) st.feed(c, now()); // stamp per network chunk, as the client does
      sink += st.chunkMs.length;
      if (!st.done) throw new Error('parse bench: the stream did not end with [DONE]');
    }
  };
  const decodeOnly = () => {
    for (let r = 0; r < responses; r++) {
      const d = new StringDecoder('utf8');
      for (const c of perResponse) sink += d.write(c).length;
    }
  };
  const sseOnly = () => {
    for (let r = 0; r < responses; r++) {
      const d = new StringDecoder('utf8');
      const p = createParser({ onEvent: (e) => (sink += e.data.length) });
      for (const c of perResponse) p.feed(d.write(c));
    }
  };
  const texts = perResponse.map((b) => b.toString('utf8').slice(6, -2));
  const jsonOnly = () => {
    for (let r = 0; r < responses; r++) for (let i = 0; i < texts.length - 1; i++) sink += JSON.parse(texts[i]).created;
  };
  const n = responses * perResponse.length;
  nsPerEvent(timerRun(perResponse), n, 2); // warm-up (JIT)
  const perEvent = nsPerEvent(timerRun(perResponse), n);
  const sliced = nsPerEvent(timerRun(big), n);
  const decode = nsPerEvent(decodeOnly, n);
  const sse = nsPerEvent(sseOnly, n);
  const json = nsPerEvent(jsonOnly, n);
  const stamp = nsPerEvent(() => {
    for (let i = 0; i < n; i++) sink += now();
  }, n);
  return { n, perEvent, sliced, decode, sse, json, stamp };
}

/** Best-of wall time, ms, of `summarizeLatency` and a 1000-resample bootstrap CI over 100k samples. */
function measureStats(): { summarizeMs: number; bootstrapMs: number } {
  const rng = seededRng(7);
  const samples = Float64Array.from({ length: 100_000 }, () => 5 + randExp(rng, 20));
  const timeMs = (fn: () => void, reps = 3) => {
    let best = Infinity;
    for (let r = 0; r < reps; r++) {
      const t = performance.now();
      fn();
      best = Math.min(best, performance.now() - t);
    }
    return round(best, 1);
  };
  const summarizeMs = timeMs(() => (sink += summarizeLatency(samples).p99));
  const bootstrapMs = timeMs(() => (sink += bootstrapPercentileCI(samples, 99, { iterations: 1000 }).hi), 2);
  return { summarizeMs, bootstrapMs };
}

/** Run the parse-and-stats benchmark. */
export async function run(): Promise<BenchResult> {
  const machineBefore = machine();
  const perResponse = responseEvents(STREAM_EVENTS);
  const responses = EVENTS / STREAM_EVENTS;
  const bytesPerEvent = round(perResponse.reduce((a, b) => a + b.length, 0) / perResponse.length, 0);
  const { n, perEvent, sliced, decode, sse, json, stamp } = measureParse(perResponse, responses);
  const { summarizeMs, bootstrapMs } = measureStats();
  const eventsPerCoreSec = Math.round(1e9 / perEvent);
  if (sink === 42) console.log(''); // keep the work observable

  const lines = [
    `event size ${bytesPerEvent} B (vLLM chat chunk with continuous usage)`,
    `stream timer, one event per network chunk: ${perEvent} ns/event (≈ ${eventsPerCoreSec.toLocaleString('en-US')} events/s per core for parsing alone)`,
    `stream timer, 16 KiB network chunks: ${sliced} ns/event`,
    `layers per event: stamp ${stamp} ns, UTF-8 decode ${decode} ns, decode+SSE split ${sse} ns, JSON.parse ${json} ns`,
    `summarizeLatency over 100k samples: ${summarizeMs} ms; bootstrapPercentileCI p99 (1000 resamples) over 100k: ${bootstrapMs} ms`,
    loadLine(),
  ];
  const targets = [
    {
      target: 'stamping + parsing ≤ 10 % of one core at 30,000 events/s (≤ 3.3 µs/event)',
      measured: `${(perEvent / 1000).toFixed(2)} µs/event → ${((perEvent * 30_000) / 1e7).toFixed(1)} % of a core at 30k events/s`,
      met: perEvent <= 3333,
    },
    {
      target: 'statistics of a 100k-sample run in under 2 s (summary + bootstrap CI)',
      measured: `${summarizeMs} ms + ${bootstrapMs} ms`,
      met: summarizeMs + bootstrapMs < 2000,
    },
  ];
  return {
    name: 'parse',
    lines,
    targets,
    data: {
      events: n,
      bytesPerEvent,
      nsPerEvent: {
        streamTimerPerEventChunk: perEvent,
        streamTimer16KiB: sliced,
        stamp,
        decode,
        decodeAndSse: sse,
        jsonParse: json,
      },
      stats100k: { summarizeLatencyMs: summarizeMs, bootstrapPercentileCIMs: bootstrapMs, iterations: 1000 },
    },
    machineBefore,
    machineAfter: machine(),
  };
}
