/**
 * The shell of a standalone report page: one HTML file that opens offline. plotly.js is inlined
 * once, at the top of the body (`plotlyScriptTag`), and every chart after it is a
 * `<div class="loadlab-plot">` drawn by `figureHtml` without a second copy. Headings, captions
 * and labels are Simplified Chinese with the English term kept, as in the lessons. The provenance
 * block says, from each run's own manifest, what was measured: simulated or real, server version,
 * flags, load, dates.
 */
import { bannerHtml } from '../view/banner';
import type { Figure } from '../view/figure';
import { provenanceOf, runServerLabel } from '../view/provenance';
import { figureHtml, plotlyScriptTag } from '../view/render';
import { tableHtml } from '../view/table-html';
import { manifestOf, type ReportRun } from './report-input';

/** One part of a report: a heading and its HTML (a table, a chart, a paragraph). */
export interface ReportSection {
  heading: string;
  html: string;
}

/** Text escaped for HTML content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A paragraph of escaped text. */
export function para(text: string): string {
  return `<p class="loadlab-note">${escapeHtml(text)}</p>`;
}

/** Numbers chart ids in page order (`report-plot-1`, …), so ids are stable from run to run. */
export class FigureIds {
  private n = 0;
  /** A chart's HTML (no plotly.js: the page inlines it once). */
  html(fig: Figure): string {
    this.n += 1;
    return figureHtml(fig, { includePlotly: false, divId: `report-plot-${this.n}` });
  }
}

/** `'模拟器 simulated'`, `'真实服务器 real'`, `'模拟与真实混合 simulated and real mixed'`, or unknown. */
export function provenanceWords(runs: readonly ReportRun[]): string {
  const known = runs.flatMap((r) => (manifestOf(r) ? [{ manifest: manifestOf(r)! }] : []));
  const what = provenanceOf(known);
  const unknown = known.length < runs.length ? '（部分运行的 manifest 损坏，来源未知 some manifests unusable）' : '';
  if (what === 'simulated') return `模拟器 simulated${unknown}`;
  if (what === 'real') return `真实服务器 real${unknown}`;
  if (what === 'mixed') return `模拟与真实混合 simulated and real mixed${unknown}`;
  return '未知 unknown（manifest 损坏 manifest unusable）';
}

function short(v: unknown): string {
  if (v === undefined) return '—';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 400 ? `${s.slice(0, 400)}…` : s;
}

/** The provenance rows of one run, read from its own manifest (`项目 item` / `值 value`). */
export function provenanceRows(run: ReportRun): Record<string, unknown>[] {
  const m = manifestOf(run);
  const row = (k: string, v: unknown) => ({ '项目 item': k, '值 value': short(v) });
  if (!m) return [row('运行 run', run.dir), row('manifest', `损坏 unusable: ${run.damaged}`)];
  const t = m.target;
  const { label, ...loadOpts } = m.load.options;
  return [
    row('运行 run', `${run.label} (${run.dir}), runId ${m.runId}`),
    row('来源 provenance', `${provenanceWords([run])}: ${runServerLabel(m)}`),
    row('目标 target', `${t.kind} ${t.baseUrl}, model ${t.model}`),
    row('引擎 engine', t.engine),
    row('max_model_len', t.maxModelLen),
    row('服务参数 flags', t.flags && Object.keys(t.flags).length ? t.flags : '—'),
    row('负载 load', `${typeof label === 'string' ? label : m.load.shape} ${JSON.stringify(loadOpts)}`),
    row('工作负载 workload', m.workload),
    row('时间 date', `${m.startedAt} → ${m.endedAt ?? '—'}`),
    row('状态 status', m.status),
    row('LoadLab', `${m.loadlabVersion}, Node ${m.nodeVersion}, ${m.platform}`),
  ];
}

/** One line under a run report's title: what measured it, the target, the load and the date, from its manifest. */
export function runSubtitle(run: ReportRun): string {
  const m = manifestOf(run);
  if (!m) return `${run.dir}：manifest 损坏 unusable (${run.damaged})，来源未知 provenance unknown`;
  const load = typeof m.load.options.label === 'string' ? m.load.options.label : m.load.shape;
  return `${provenanceWords([run])} · ${runServerLabel(m)} · ${m.target.model} @ ${m.target.baseUrl} · 负载 load ${load} · ${m.startedAt}`;
}

/** The provenance table of one run. */
export function provenanceTable(run: ReportRun): string {
  return tableHtml(provenanceRows(run), { caption: `来源 provenance：${run.label}`, kind: 'provenance' });
}

const STYLE = `body{margin:16px 24px;font-family:sans-serif;color:#222;max-width:1300px}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table.loadlab-table{border-collapse:collapse;margin:8px 0;font-size:13px;max-width:100%}
table.loadlab-table td,table.loadlab-table th{border:1px solid #ddd;padding:3px 8px;overflow-wrap:anywhere}
table.loadlab-table caption{text-align:left;font-weight:bold;padding:4px 0}
.loadlab-note{color:#444;font-size:13px}`;

/**
 * A complete offline page: `title` (escaped), an optional `subtitle` line, banners, then each section. plotly.js is inlined
 * once before the first section; charts in sections must come from `FigureIds.html`.
 */
export function reportPage(
  title: string,
  banner: readonly string[],
  sections: readonly ReportSection[],
  subtitle?: string,
): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="zh-CN"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    '</head><body>',
    plotlyScriptTag(),
    `<h1>${escapeHtml(title)}</h1>`,
    subtitle ? para(subtitle) : '',
    bannerHtml([...banner]),
    ...sections.map((s) => `<section><h2>${escapeHtml(s.heading)}</h2>\n${s.html}</section>`),
    para(`生成于 generated ${new Date().toISOString()}：以上数字读自各运行文件夹本身 (read from the run folders' own files)。`),
    '</body></html>',
    '',
  ].join('\n');
}
