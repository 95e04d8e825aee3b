// The size rules of docs/design.md as a test: a module holds one concept (<= 250 lines) and a
// function is <= 80 lines (function declarations, arrows, function expressions, methods,
// accessors, constructors; counted from their first to their last line). Files being split by
// others when this test was written are listed below with their measured size at that time;
// the list only shrinks: an entry that no longer needs its allowance fails, so it gets removed.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths';

const MAX_FILE_LINES = 250;
const MAX_FUNCTION_LINES = 80;

/** Files over 250 lines, being split (issue #11). */
const LONG_FILES: Record<string, number> = {
  'src/sim/http/faults.ts': 314,
  'src/run/loader.ts': 272,
};
/** `file:name` of functions over 80 lines, in files owned by others during issue #11. */
const LONG_FUNCTIONS: Record<string, number> = {
  'src/sim/http/faults.ts:createFaults': 151,
  'src/calibrate/null-server.ts:startNullServer': 143,
  'src/sim/http/http.ts:createSimServer': 113,
  'src/vllm/launcher.ts:launchVllm': 99,
  'src/sim/serve.ts:serveSim': 92,
  'src/sim/http/generate.ts:runGeneration': 92,
  'src/run/store.ts:createRun': 92,
  'src/cli/run.ts:runCommand': 92,
  'src/sim/start.ts:startSim': 89,
  'src/client/client.ts:createClient': 86,
  'src/runner/validate.ts:resolveRunOptions': 83,
};

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Lines of a file: newline-terminated lines, as `wc -l` counts them. */
const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** `file:name` → lines of every function-like node over the limit (the longest per name). */
function longFunctions(root: string, files: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const file of files) {
    const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (n: ts.Node): void => {
      if (ts.isFunctionLike(n) && 'body' in n && n.body) {
        const first = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
        const lines = last - first + 1;
        if (lines > MAX_FUNCTION_LINES) {
          const named = n as ts.Node & { name?: ts.Node };
          const parent = n.parent as ts.Node & { name?: ts.Node };
          const name = named.name?.getText(sf) ?? parent?.name?.getText(sf) ?? `<anonymous at line ${first + 1}>`;
          const key = `${relative(root, file)}:${name}`;
          out[key] = Math.max(out[key] ?? 0, lines);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return out;
}

describe('src/ keeps modules and functions small', () => {
  const root = packageRoot();
  const files = tsFiles(join(root, 'src'));

  it(`no module over ${MAX_FILE_LINES} lines (beyond the listed ones)`, () => {
    const over = Object.fromEntries(
      files.map((f) => [relative(root, f), lineCount(readFileSync(f, 'utf8'))] as const).filter(([, n]) => n > MAX_FILE_LINES),
    );
    const unlisted = Object.keys(over).filter((f) => !(f in LONG_FILES));
    expect(unlisted.map((f) => `${f}: ${over[f]} lines; split it by concept`)).toEqual([]);
    const grown = Object.keys(over).filter((f) => f in LONG_FILES && over[f] > LONG_FILES[f]);
    expect(grown.map((f) => `${f} grew to ${over[f]} lines (allowed ${LONG_FILES[f]} while it is split)`)).toEqual([]);
    const stale = Object.keys(LONG_FILES).filter((f) => !(f in over));
    expect(stale.map((f) => `${f} is within ${MAX_FILE_LINES} lines now: remove it from LONG_FILES`)).toEqual([]);
  });

  it(`no function over ${MAX_FUNCTION_LINES} lines (beyond the listed ones)`, () => {
    const over = longFunctions(root, files);
    const unlisted = Object.keys(over).filter((k) => !(k in LONG_FUNCTIONS));
    expect(unlisted.map((k) => `${k}: ${over[k]} lines; make it a short sequence of named steps`)).toEqual([]);
    const grown = Object.keys(over).filter((k) => k in LONG_FUNCTIONS && over[k] > LONG_FUNCTIONS[k]);
    expect(grown.map((k) => `${k} grew to ${over[k]} lines (allowed ${LONG_FUNCTIONS[k]} while it is split)`)).toEqual([]);
    const stale = Object.keys(LONG_FUNCTIONS).filter((k) => !(k in over));
    expect(stale.map((k) => `${k} is within ${MAX_FUNCTION_LINES} lines now: remove it from LONG_FUNCTIONS`)).toEqual([]);
  });
});
