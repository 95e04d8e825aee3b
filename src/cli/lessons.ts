/**
 * `loadlab lessons`: execute every lesson notebook headless with the tslab kernel (against
 * the simulator unless `LOADLAB_BASE_URL` / `LOADLAB_VLLM_MODEL` say otherwise), writing
 * executed copies (`.ipynb` and `.html`) to `data/executed/`. Fails loudly on any cell error.
 * Load points already complete in `data/` are reused (see `measure`); `--force` measures all again.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import { fromRoot } from '../paths';
import { healthLines, lessonPointsHealth } from './lessons-health';

const INSTALL_HINT =
  'sudo apt-get install -y python3-nbclient python3-nbconvert python3-ipykernel jupyter-client && npx tslab install --python=/usr/bin/python3';

/** Options of `runLessons`. */
export interface LessonsOptions {
  /** Only notebooks whose file name contains one of these, e.g. `['02', 'burst']`; default all. */
  only?: string[];
  /** Where executed copies go; default `<repo>/data/executed`. */
  outDir?: string;
  /** Per-cell timeout, s; default 900. */
  cellTimeoutS?: number;
  /** Measure every point again, even those whose complete run is saved in `data/`; default false (resume). */
  force?: boolean;
  /** Python that has nbconvert; default `/usr/bin/python3` if it has it, else `python3`. */
  python?: string;
  log?: (line: string) => void;
}

/** One notebook's outcome. */
export interface LessonOutcome {
  notebook: string;
  ok: boolean;
  seconds: number;
  error?: string;
}

function hasJupyter(python: string): boolean {
  const r = spawnSync(python, ['-c', 'import nbconvert, nbclient, ipykernel'], { stdio: 'ignore' });
  return r.status === 0;
}

function hasTslabKernel(python: string): boolean {
  const r = spawnSync(python, ['-m', 'jupyter', 'kernelspec', 'list'], { encoding: 'utf8' });
  return r.status === 0 && /\btslab\b/.test(r.stdout);
}

/** Pick a Python with nbconvert, or throw the one command that installs what is missing. */
export function findJupyterPython(preferred?: string): string {
  const candidates = preferred ? [preferred] : ['/usr/bin/python3', 'python3'];
  const python = candidates.find((p) => (p.startsWith('/') ? existsSync(p) : true) && hasJupyter(p));
  if (!python) {
    throw new Error(
      `Jupyter's Python pieces (nbconvert, nbclient, ipykernel) are missing. Install them with:\n  ${INSTALL_HINT}`,
    );
  }
  if (!hasTslabKernel(python)) {
    throw new Error(`The tslab kernel is not installed for ${python}. Install it with:\n  npx tslab install --python=${python}`);
  }
  return python;
}

/** The lesson notebooks, in order. */
export function lessonNotebooks(only?: string[]): string[] {
  const dir = fromRoot('notebooks');
  return readdirSync(dir)
    .filter((f) => /^\d\d[a-z]?-.*\.ipynb$/.test(f))
    .filter((f) => !only?.length || only.some((o) => f.includes(o)))
    .sort()
    .map((f) => join(dir, f));
}

/** Execute the lessons; resolves with one outcome per notebook (never throws for a cell error). */
export function runLessons(opts: LessonsOptions = {}): LessonOutcome[] {
  const log = opts.log ?? ((l: string) => console.log(l));
  const python = findJupyterPython(opts.python);
  const outDir = opts.outDir ?? fromRoot('data', 'executed');
  mkdirSync(outDir, { recursive: true });
  const env = {
    ...process.env,
    PATH: [fromRoot('node_modules', '.bin'), process.env.PATH ?? ''].join(delimiter),
    LOADLAB_ROOT: fromRoot(),
    ...(opts.force ? { LOADLAB_FORCE: '1' } : {}),
  };
  const outcomes: LessonOutcome[] = [];
  for (const nb of lessonNotebooks(opts.only)) {
    const name = basename(nb);
    const started = Date.now();
    log(`▶ ${name}`);
    const exec = spawnSync(
      python,
      [
        '-m',
        'nbconvert',
        '--to',
        'notebook',
        '--execute',
        `--ExecutePreprocessor.timeout=${opts.cellTimeoutS ?? 900}`,
        '--output-dir',
        outDir,
        nb,
      ],
      { env, encoding: 'utf8', cwd: fromRoot('notebooks'), maxBuffer: 64 * 1024 * 1024 },
    );
    let error: string | undefined;
    if (exec.status !== 0) {
      error = (exec.stderr || exec.stdout || `exit ${exec.status}`).split('\n').slice(-30).join('\n');
    } else {
      const html = spawnSync(python, ['-m', 'nbconvert', '--to', 'html', join(outDir, name)], { env, encoding: 'utf8' });
      if (html.status !== 0) error = `HTML export failed: ${(html.stderr || '').split('\n').slice(-10).join('\n')}`;
    }
    const seconds = (Date.now() - started) / 1000;
    outcomes.push({ notebook: name, ok: !error, seconds, ...(error ? { error } : {}) });
    log(error ? `✗ ${name} failed after ${seconds.toFixed(0)} s:\n${error}` : `✓ ${name} (${seconds.toFixed(0)} s)`);
  }
  return outcomes;
}

/** `loadlab lessons [--only 02,burst] [--force] [--out DIR]`; exit code 1 if any notebook failed. */
export async function lessonsCommand(argv: string[]): Promise<number> {
  const opts: LessonsOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') opts.only = (argv[++i] ?? '').split(',').filter(Boolean);
    else if (a === '--force') opts.force = true;
    else if (a === '--out') opts.outDir = argv[++i];
    else if (a === '--help' || a === '-h') {
      console.log(
        'loadlab lessons [--only 02,burst] [--force] [--out DIR]\n' +
          '  Executes notebooks/NN-*.ipynb headless (tslab) into data/executed/ (.ipynb + .html).\n' +
          '  Load points whose complete run is already saved in data/ are reused (a crashed run resumes); --force measures everything again.',
      );
      return 0;
    } else throw new Error(`unknown option '${a}' for 'loadlab lessons'; use --only, --force or --out`);
  }
  const since = new Date().toISOString();
  const outcomes = runLessons(opts);
  const failed = outcomes.filter((o) => !o.ok);
  const total = outcomes.reduce((s, o) => s + o.seconds, 0);
  console.log(
    `\n${outcomes.length - failed.length} of ${outcomes.length} lessons executed in ${total.toFixed(0)} s${failed.length ? `; failed: ${failed.map((f) => f.notebook).join(', ')}` : ''}`,
  );
  const stems = outcomes.map((o) => basename(o.notebook, '.ipynb'));
  for (const line of healthLines(lessonPointsHealth(fromRoot('data'), stems), since)) console.log(line);
  if (!outcomes.length) console.log('No notebooks matched.');
  return failed.length || !outcomes.length ? 1 : 0;
}
