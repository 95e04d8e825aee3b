/**
 * Where the samples of a V8 CPU profile (`node --cpu-prof`, or the inspector's `Profiler.stop`)
 * went: self time per function, as a share of the non-idle samples, optionally only the samples
 * of a window `[end − fromEndS, end − skipEndS]` (to leave start-up out). Idle time includes the
 * wait in epoll; kernel time spent in a syscall shows under the JS-called native (`writev`, …).
 * Run: `npx tsx bench/profile-top.ts <file.cpuprofile> [top=40] [fromEndS] [skipEndS]`.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg, fromEndArg, skipEndArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: npx tsx bench/profile-top.ts <file.cpuprofile> [top=40] [fromEndS] [skipEndS]');
  process.exit(2);
}
const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const win = Number(fromEndArg ?? 0) * 1e6;
const skipEnd = Number(skipEndArg ?? 0) * 1e6;
const byId = new Map(p.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let t = p.startTime;
for (let i = 0; i < p.samples.length; i++) {
  const dt = p.timeDeltas[i] ?? 0;
  t += dt;
  if (win > 0 && (t < p.endTime - win || t > p.endTime - skipEnd)) continue;
  const cf = byId.get(p.samples[i])!.callFrame;
  const url = cf.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(src|bench)\//, '$1/');
  const k = `${cf.functionName || '(anonymous)'} ${url}`;
  self.set(k, (self.get(k) ?? 0) + dt);
}
const idle = self.get('(idle) ') ?? 0;
const total = [...self.values()].reduce((a, b) => a + b, 0);
const busy = total - idle;
console.log(`${(total / 1000).toFixed(0)} ms sampled, ${(busy / 1000).toFixed(0)} ms not idle`);
for (const [k, us] of [...self]
  .filter(([k]) => k !== '(idle) ')
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(topArg ?? 40))) {
  console.log(`${((us / busy) * 100).toFixed(1).padStart(5)} %  ${(us / 1000).toFixed(0).padStart(6)} ms  ${k}`);
}
