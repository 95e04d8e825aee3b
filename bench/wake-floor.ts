/**
 * The machine's wake-up floor: how late a thread that sleeps in `Atomics.wait` (a futex wait with a
 * timeout, what the simulator's alarm thread does) wakes up, with nothing else to do. The simulator's
 * step lateness can't be below it. It blocks the calling thread for `count × sleepMs`.
 *
 *   npx tsx bench/wake-floor.ts [count=2000] [sleepMs=5] [slackNs]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dist, type Dist } from './common';

/**
 * Lateness of `count` futex sleeps of `sleepMs`, ms. With `slackNs`, this thread's timer slack is that many ns during
 * the sleeps (the main thread only, Linux; src/proc/timer-slack.ts), and set back after.
 */
export function wakeFloor(count = 1000, sleepMs = 2, slackNs?: number): Dist {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const hr = () => Number(process.hrtime.bigint()) / 1e6;
  const late: number[] = [];
  const was = slackNs === undefined ? undefined : readFileSync('/proc/self/timerslack_ns', 'utf8').trim();
  if (slackNs !== undefined) writeFileSync('/proc/self/timerslack_ns', String(slackNs));
  try {
    for (let i = 0; i < count; i++) {
      const due = hr() + sleepMs;
      Atomics.wait(cell, 0, 0, sleepMs);
      late.push(hr() - due);
    }
  } finally {
    if (was !== undefined) writeFileSync('/proc/self/timerslack_ns', was);
  }
  return dist(late);
}

if (process.argv[1]?.endsWith('wake-floor.ts')) {
  const count = Number(process.argv[2] ?? 2000);
  const sleepMs = Number(process.argv[3] ?? 5);
  const slackNs = process.argv[4] === undefined ? undefined : Number(process.argv[4]);
  const d = wakeFloor(count, sleepMs, slackNs);
  console.log(
    `futex sleep ${sleepMs} ms × ${count}${slackNs === undefined ? '' : ` at ${slackNs} ns of timer slack`}: late p50 ${d.p50} / p90 ${d.p90} / p99 ${d.p99} / max ${d.max} ms`,
  );
}
