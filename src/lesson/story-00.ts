/**
 * Lesson 00's narrative builder (issue #13): what the client calibration says about this machine,
 * computed from `calibrateClient`'s result, so that the notebook's cell shows the measurement.
 */
import type { ClientCalibration } from '../calibrate/calibrate-result';
import { modelledStepMs } from '../calibrate/calibrate';

/**
 * Sentences (Simplified Chinese) on a client calibration: the flat-out ceiling, the highest paced
 * load the client kept up with (or where it fell behind, and whether another program took the
 * CPU), a busy-machine warning when the 1-minute load exceeds the cores, and the worst event-loop
 * delay over the paced passes. Pure.
 */
export function calibrationSentences(cal: Omit<ClientCalibration, 'verdict'>): string[] {
  const flat = cal.passes.find((p) => p.mode === 'flat-out');
  const paced = cal.passes.filter((p) => p.mode === 'paced');
  const out: string[] = [];
  if (flat) {
    out.push(
      `客户端上限：全速时每秒处理 ${Math.round(flat.eventsPerSec).toLocaleString()} 个 SSE 事件（${flat.concurrency} 路流，` +
        `客户端 CPU ${flat.clientCpuPercent}%，空服务器 CPU ${flat.serverCpuPercent}%${flat.serverCpuPercent >= 85 ? '——瓶颈在服务器一侧，客户端的真实上限更高' : ''}）。`,
    );
  }
  if (cal.ok && cal.keptUpTo) {
    const k = cal.keptUpTo;
    const step = modelledStepMs(k.concurrency);
    out.push(
      `按 4090 解码的节奏送数据时，最高试到 ${k.concurrency} 路（每秒 ${Math.round(k.eventsPerSec).toLocaleString()} 个事件），` +
        `打点误差 p99 都不超过 ${cal.stampLimitMs} ms（${k.concurrency} 路时 ${k.stampErrorP99Ms.toFixed(2)} ms，约为一个解码步 ${step} ms 的 ` +
        `${((100 * k.stampErrorP99Ms) / step).toFixed(0)}%）：在这个负载以内，这台机器测出的 TTFT 和 ITL 可以相信。`,
    );
  } else if (cal.fellBehindAt) {
    const b = cal.fellBehindAt;
    out.push(
      `在 ${b.concurrency} 路（每秒 ${Math.round(b.eventsPerSec).toLocaleString()} 个事件）时客户端**跟不上**：打点误差 p99 为 ` +
        `${b.stampErrorP99Ms.toFixed(2)} ms，超过 ${cal.stampLimitMs} ms 的界限，这个负载下测到的 TTFT 和 ITL 里含有最多约这么多的客户端自身延迟。` +
        (cal.keptUpTo ? `（${cal.keptUpTo.concurrency} 路时跟得上。）` : ''),
    );
    const behind = paced.find((p) => p.concurrency === b.concurrency);
    const cause = behind?.stallCause;
    if (behind && cause && cause !== 'none') {
      out.push(
        cause === 'other-processes'
          ? `落后的时候客户端在等 CPU 而不是在干活（只用了一个核的 ${behind.clientCpuPercent}%）：是别的程序抢走了 CPU（或核太少），不是解析数据。关掉它们再校准一次。`
          : cause === 'woken-late'
            ? `落后的时候客户端多半还在睡，过了该醒的时刻（只用了一个核的 ${behind.clientCpuPercent}%）：是内核或虚拟机的宿主机晚唤醒了它（晚唤醒 woken late），不是解析数据，也不是别的程序。再校准一次；如果还这样，就是这台机器唤醒线程偏晚。`
            : `落后的原因是客户端自己的${cause === 'gc' ? '垃圾回收（GC）' : '工作'}（用了一个核的 ${behind.clientCpuPercent}%）：每个进程少开几路，或给客户端单独一个核。`,
      );
    } else if (behind && behind.clientCpuPercent < 50) {
      out.push(
        `那一轮客户端进程自己只用了一个核的 ${behind.clientCpuPercent}%：延迟不是解析数据造成的，而是别的程序抢走了 CPU（或核太少）。关掉它们再校准一次。`,
      );
    }
  }
  if (cal.loadAverage1m > cal.cores) {
    out.push(`机器当时很忙：1 分钟负载 ${cal.loadAverage1m}，只有 ${cal.cores} 个核。别的程序抢 CPU 时打点误差会变大。`);
  }
  if (paced.length) {
    out.push(
      `${paced.some((p) => p.concurrency === 128) ? '128 路正是第 03 课突发实验的规模；' : ''}` +
        `每一轮的事件循环延迟 p99 最大为 ${Math.max(...paced.map((p) => p.eventLoopDelayP99Ms)).toFixed(1)} ms。`,
    );
  }
  return out;
}
