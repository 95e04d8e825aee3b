/**
 * The prose an executed lesson shows (`npm run lessons` writes `data/executed/<lesson>.ipynb`), but
 * only when that copy is current: its code cells must equal the notebook's in `notebooks/`, else
 * the prose came from older code and proves nothing about this one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fromRoot } from '../../src/paths';

interface Cell {
  cell_type: string;
  source: string | string[];
  outputs?: Array<{ data?: Record<string, string | string[]>; text?: string | string[] }>;
}
const text = (s: string | string[] | undefined) => (Array.isArray(s) ? s.join('') : (s ?? ''));
const codeOf = (cells: Cell[]) => cells.filter((c) => c.cell_type === 'code').map((c) => text(c.source));

/** `{ markdown }`: every Markdown and stdout output of the executed copy of `lesson`; `{ stale }`: why it cannot be used. */
export function executedProse(lesson: string): { markdown: string[] } | { stale: string } {
  const file = fromRoot('data', 'executed', `${lesson}.ipynb`);
  if (!existsSync(file)) return { stale: `data/executed/${lesson}.ipynb is missing: run \`npm run lessons\`` };
  const executed = (JSON.parse(readFileSync(file, 'utf8')) as { cells: Cell[] }).cells;
  const source = (JSON.parse(readFileSync(fromRoot('notebooks', `${lesson}.ipynb`), 'utf8')) as { cells: Cell[] }).cells;
  const a = codeOf(executed);
  const b = codeOf(source);
  if (a.length !== b.length || a.some((s, i) => s !== b[i])) {
    return { stale: `data/executed/${lesson}.ipynb was executed from older code: run \`npm run lessons\` again` };
  }
  const markdown: string[] = [];
  for (const c of executed) {
    for (const o of c.outputs ?? []) {
      if (o.data?.['text/markdown'] !== undefined) markdown.push(text(o.data['text/markdown']));
      else if (o.text !== undefined) markdown.push(text(o.text));
    }
  }
  return { markdown };
}

/**
 * Whether the executed prose can be checked. Locally a stale or missing copy skips the check; in CI
 * (`CI` set), which executes the lessons before the tests, it is a failure, never a skip.
 */
export function proseReady(prose: ReturnType<typeof executedProse>): prose is { markdown: string[] } {
  if ('stale' in prose && process.env.CI) throw new Error(`${prose.stale} (CI executes the lessons before the tests)`);
  return 'markdown' in prose;
}
