/**
 * Full-width warning banners shown above a table or a chart (never squeezed into a table's
 * caption, which is only as wide as the table): one line per warning, in the notebook's width.
 */
import { STEAL_NAMED_PERCENT } from '../client-stall';
import type { RunSummary } from '../types';

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * The HTML of a banner holding `lines` (escaped; one paragraph each), `''` when there are none.
 * Block-level and `box-sizing: border-box` at 100 % width, so it wraps inside the output and never
 * widens it.
 */
export function bannerHtml(lines: string | readonly string[] | undefined): string {
  const ls = (typeof lines === 'string' ? [lines] : (lines ?? [])).filter((l) => l.trim() !== '');
  if (ls.length === 0) return '';
  const ps = ls.map((l) => `<p style="margin:2px 0">${escapeHtml(l)}</p>`).join('');
  return (
    '<div class="loadlab-banner" role="alert" style="display:block;box-sizing:border-box;width:100%;max-width:100%;' +
    'margin:0 0 8px 0;padding:8px 12px;border-left:4px solid #d62728;background:#fff4e5;color:#222;' +
    `white-space:normal;overflow-wrap:anywhere">${ps}</div>`
  );
}

/**
 * The banner lines of a run whose measurer was the bottleneck (none when healthy or unknown):
 * what it means in Chinese with the English flag, then the run's own warnings. `label` names the run.
 */
export function healthBannerLines(summary: RunSummary, label?: string): string[] {
  const h = summary.health;
  if (!h || (!h.clientBound && !h.simBehind)) return [];
  const what = [
    h.clientBound ? '测量端（客户端）成了瓶颈 CLIENT-BOUND' : '',
    h.simBehind ? '模拟器落后于真实时间 SIMULATOR BEHIND REAL TIME' : '',
  ]
    .filter(Boolean)
    .join('；');
  const who = label === undefined ? '' : `${label}：`;
  return [
    `⚠ ${who}${what}：下面的数字可能反映测量端自身，而非服务器。`,
    ...stampLagLine(h),
    ...wokenLateLine(h),
    ...stealLine(h.clientStall?.stealPercent),
    ...h.warnings,
  ];
}

/** A Chinese line on the stamp lag that made a run client-bound, when it was checked against the simulator's send log. */
function stampLagLine(h: NonNullable<RunSummary['health']>): string[] {
  const l = h.clientStampLag;
  if (!h.clientBound || !l) return [];
  return [
    `对照模拟器自己的发送时刻，客户端给 token 块打时间戳晚了 p99 ${l.p99Ms.toFixed(1)} ms（p50 ${l.p50Ms.toFixed(1)} ms；` +
      `打点误差 stamp error，共 ${l.chunks} 块）。TTFT 和 E2E 里含有这么多客户端自己的延迟。`,
  ];
}

/** A Chinese line when the client's loop was late mostly because its thread was woken late (src/runner/stall-blame.ts). */
function wokenLateLine(h: NonNullable<RunSummary['health']>): string[] {
  const s = h.clientStall;
  if (!h.clientBound || s?.cause !== 'woken-late') return [];
  return [
    `客户端的事件循环迟到，主要是因为线程过了该醒的时刻还在睡：内核（或虚拟机的宿主机）晚唤醒了它，至少 ` +
      `${(s.lateMs.wokenLate ?? 0).toFixed(1)} ms（晚唤醒 woken late）。这是这台机器的问题，不是客户端的工作量，也不是别的程序：` +
      '重跑一次，或者把 ITL/TPOT 的尾部当作上限来读。',
  ];
}

/** A Chinese line on CPU steal over the run, when it reached {@link STEAL_NAMED_PERCENT} (none otherwise). */
function stealLine(percent: number | undefined): string[] {
  if (percent === undefined || !(percent >= STEAL_NAMED_PERCENT)) return [];
  return [
    `这次运行中，这台虚拟机的宿主机拿走了 ${percent.toFixed(1)} % 的 CPU（CPU 窃取 steal：宿主机在跑别的虚拟机）。` +
      '机器里的任何程序都改变不了它：换个时间重跑，或者把 ITL/TPOT 的尾部当作上限来读。',
  ];
}
