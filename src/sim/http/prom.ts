/**
 * A tiny Prometheus text-format registry that writes what Python's `prometheus_client`
 * writes (`generate_latest`, text format 0.0.4): counters as `<name>_total`, histograms as
 * cumulative `_bucket{le}`, `_count`, `_sum`, each family followed by its `<name>_created`
 * samples in a gauge family of their own; floats as Python prints them (`0.0`,
 * `1.768731088e+09`). Labels are sorted by name (as vLLM's multiprocess mode writes them; a
 * single API server writes them in `labelnames` order: a named deviation, order-insensitive).
 * Rendering is string concatenation over precomputed label strings: cheap at 4 scrapes/s.
 */

/** Formats a number as prometheus_client's `floatToGoString` does (`1.0`, `0.005`, `+Inf`, `1.2e+06`). */
export function pyFloat(v: number): string {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Number.isNaN(v)) return 'NaN';
  const s = pyRepr(v);
  const dot = s.indexOf('.');
  if (v > 0 && dot > 6 && !s.includes('e')) {
    const mantissa = `${s[0]}.${s.slice(1, dot)}${s.slice(dot + 1)}`.replace(/\.?0+$/, '');
    return `${mantissa}e+0${dot - 1}`;
  }
  return s;
}

/** Python's `repr(float)`: shortest round-trip digits, exponent below 1e-4 or from 1e16. */
function pyRepr(v: number): string {
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const a = Math.abs(v);
  if (a < 1e-4 || a >= 1e16) {
    const [m, e] = v.toExponential().split('e');
    const exp = Number(e);
    return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  const s = String(v);
  return s.includes('.') ? s : `${s}.0`;
}

/** Labels as a sorted `k="v",…` string (values escaped). */
function labelString(labels: Record<string, string>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${labels[k].replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`)
    .join(',');
}

/** A counter or gauge series. */
export interface Scalar {
  inc(by?: number): void;
  set(v: number): void;
  readonly value: number;
}

/** A histogram series. */
export interface Histogram {
  observe(v: number): void;
  readonly count: number;
  readonly sum: number;
}

/** One series (or a header-only family); series of one family are registered one after another. */
interface Family {
  /** The exported family name (`<name>_total` for a counter): consecutive series with the same one share a header. */
  name?: string;
  /** `# HELP`/`# TYPE` of the family's `_created` gauge, written after all its series (prometheus_client 0.0.4). */
  createdHeader?: string;
  /** Appends the series' sample lines to `out` and its `_created` line, if any, to `created`. */
  render(out: string[], created: string[]): void;
}

/** Holds metric families in registration order and renders them as Prometheus text 0.0.4. */
export class PromRegistry {
  private readonly families: Family[] = [];

  /**
   * `baseLabels` go on every series unless a family opts out (e.g. `engine`, `model_name`).
   * `created: false` leaves out the `_created` samples, as a V0 server does
   * (`prometheus_client.disable_created_metrics()` in `vllm/engine/metrics.py`).
   */
  constructor(
    private readonly baseLabels: Record<string, string>,
    private readonly nowS = () => Date.now() / 1000,
    private readonly created = true,
  ) {}

  /** A family shown only by its `# HELP`/`# TYPE` lines: declared, never set (e.g. V0's spec-decode series). */
  declare(name: string, help: string, type: 'counter' | 'gauge'): void {
    this.families.push({ render: (out) => out.push(`# HELP ${name} ${help}\n# TYPE ${name} ${type}\n`) });
  }

  /** A counter: exported as `<name>_total` and `<name>_created`. `name` is without `_total`. */
  counter(name: string, help: string, labels: Record<string, string> = {}): Scalar {
    return this.scalar('counter', name, help, labels);
  }

  /** A gauge. Pass `base: false` to leave out the base labels (info-style metrics). */
  gauge(name: string, help: string, labels: Record<string, string> = {}, base = true): Scalar {
    return this.scalar('gauge', name, help, labels, base);
  }

  /** A histogram with the given upper bounds (`+Inf` is added). */
  histogram(name: string, help: string, buckets: readonly number[], labels: Record<string, string> = {}): Histogram {
    const all = { ...this.baseLabels, ...labels };
    const before: Record<string, string> = {};
    const after: Record<string, string> = {};
    for (const k of Object.keys(all)) (k < 'le' ? before : after)[k] = all[k];
    const pre = labelString(before);
    const post = labelString(after);
    const lbl = labelString(all);
    const bounds = [...buckets, Infinity];
    const leLabels = bounds.map((b) => `{${pre ? `${pre},` : ''}le="${pyFloat(b)}"${post ? `,${post}` : ''}}`);
    const counts = new Array<number>(bounds.length).fill(0);
    const created = pyFloat(this.nowS());
    const withCreated = this.created;
    const h = { count: 0, sum: 0 };
    this.families.push({
      name,
      createdHeader: `# HELP ${name}_created ${help}\n# TYPE ${name}_created gauge\n`,
      render(out, createdOut) {
        out.push(`# HELP ${name} ${help}\n# TYPE ${name} histogram\n`);
        let acc = 0;
        for (let i = 0; i < bounds.length; i++) {
          acc += counts[i];
          out.push(`${name}_bucket${leLabels[i]} ${pyFloat(acc)}\n`);
        }
        out.push(`${name}_count{${lbl}} ${pyFloat(h.count)}\n${name}_sum{${lbl}} ${pyFloat(h.sum)}\n`);
        if (withCreated) createdOut.push(`${name}_created{${lbl}} ${created}\n`);
      },
    });
    return {
      observe(v: number) {
        let i = 0;
        while (v > bounds[i]) i++;
        counts[i]++;
        h.count++;
        h.sum += v;
      },
      get count() {
        return h.count;
      },
      get sum() {
        return h.sum;
      },
    };
  }

  /** Prometheus text exposition of every family. */
  render(): string {
    const out: string[] = [];
    const fams = this.families;
    for (let i = 0; i < fams.length; ) {
      const created: string[] = [];
      let j = i;
      do fams[j++].render(out, created);
      while (j < fams.length && fams[i].name !== undefined && fams[j].name === fams[i].name);
      if (created.length > 0) out.push(fams[i].createdHeader ?? '', ...created);
      i = j;
    }
    return out.join('');
  }

  private scalar(type: 'counter' | 'gauge', name: string, help: string, labels: Record<string, string>, base = true): Scalar {
    const lbl = `{${labelString(base ? { ...this.baseLabels, ...labels } : labels)}}`;
    const created = pyFloat(this.nowS());
    const withCreated = this.created;
    const s = { value: 0 };
    const exported = type === 'counter' ? `${name}_total` : name;
    // Several series of one family (e.g. request_success by reason) share one HELP/TYPE header.
    const prev = this.families[this.families.length - 1] as Family & { name?: string };
    const header = prev?.name === exported ? '' : `# HELP ${exported} ${help}\n# TYPE ${exported} ${type}\n`;
    const fam: Family & { name: string } = {
      name: exported,
      createdHeader: `# HELP ${name}_created ${help}\n# TYPE ${name}_created gauge\n`,
      render(out, createdOut) {
        out.push(`${header}${exported}${lbl} ${pyFloat(s.value)}\n`);
        if (type === 'counter' && withCreated) createdOut.push(`${name}_created${lbl} ${created}\n`);
      },
    };
    this.families.push(fam);
    return {
      inc(by = 1) {
        s.value += by;
      },
      set(v: number) {
        s.value = v;
      },
      get value() {
        return s.value;
      },
    };
  }
}
