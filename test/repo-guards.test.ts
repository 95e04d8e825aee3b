import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../src/paths';

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('src/ stays loadable by the tslab kernel', () => {
  const files = tsFiles(join(packageRoot(), 'src'));

  it('never uses import.meta (tslab loads src/ as CommonJS; use src/paths.ts)', () => {
    const offenders = files.filter((f) => /\bimport\.meta\.\w+/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('uses extensionless relative imports (tslab has no allowImportingTsExtensions)', () => {
    const offenders = files.filter((f) => /from\s+['"]\.{1,2}\/[^'"]*\.ts['"]/.test(readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The house rules of docs/design.md (issue #11): layers, no circles, small modules and functions.
// ---------------------------------------------------------------------------------------------

/**
 * The layers of src/, lowest first. A folder may import its own files and any folder on a LOWER
 * line, never one on its own line (siblings stay independent) or a higher one. `shared` is the
 * files directly in src/ (types, rng, paths); `index` is src/index.ts.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['shared'], //                              records, error codes, seeded RNG, package paths
  ['proc', 'wire'], //                        child processes (spawn, groups, ports, which); vLLM's SSE/usage/error shapes
  ['client'], //                              body, request, timing, errors, url, http-get
  ['schedule', 'stats', 'run'], //            when requests are sent; percentiles and summaries; run files
  ['workload', 'vllm', 'observe', 'view', 'exchange'], // what is sent; serve flags + launching; /metrics, nvidia-smi; figures, tables; vllm bench result files
  ['sim', 'runner'], //                       the simulated vLLM (its own process); one measured run
  ['calibrate', 'sweep', 'fit'], //           measuring the measurer (models a step with sim's cost); sweeps of runs; fitting the cost model to a server
  ['lesson'], //                              what notebooks call: measure, openTarget, helpers
  ['report'], //                              standalone HTML/CSV reports and run comparisons
  ['cli'], //                                 the loadlab command
  ['index'], //                               the public API
];
/** The simulator runs as its own process: it speaks vLLM's API and reads only the vocabulary below it. */
const SIM_MAY_IMPORT = new Set(['shared', 'proc', 'wire', 'vllm', 'sim']);
const MAX_FILE_LINES = 250;
const MAX_FUNCTION_LINES = 80;

const root = packageRoot();
const srcDir = join(root, 'src');
const rel = (f: string) => relative(root, f).split('\\').join('/');
const rankOf = new Map(LAYERS.flatMap((names, i) => names.map((n) => [n, i] as const)));

/** The layer of a file: its first folder under src/, `shared` for src/*.ts, `index` for src/index.ts. */
function layerOf(file: string): string {
  const parts = relative(srcDir, file).split(/[\\/]/);
  if (parts.length === 1) return parts[0] === 'index.ts' ? 'index' : 'shared';
  return parts[0] ?? 'shared';
}

/** Relative module specifiers of a file: static imports/exports (type-only ones too), import(), require(). */
function specifiersOf(sf: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      out.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.arguments.length === 1 && ts.isStringLiteral(node.arguments[0]!)) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require'))
        out.push((node.arguments[0] as ts.StringLiteral).text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out.filter((s) => s.startsWith('.'));
}

interface SrcFile {
  file: string;
  text: string;
  sf: ts.SourceFile;
}
const srcFiles: SrcFile[] = tsFiles(srcDir)
  .sort()
  .map((file) => {
    const text = readFileSync(file, 'utf8');
    return { file, text, sf: ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true) };
  });
const known = new Set(srcFiles.map((f) => f.file));

/** The import graph of src/: file -> the src files it imports (unresolvable specifiers are listed apart). */
function importGraph(): { edges: Map<string, string[]>; unresolved: string[] } {
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const { file, sf } of srcFiles) {
    const targets: string[] = [];
    for (const spec of specifiersOf(sf)) {
      const base = join(dirname(file), spec);
      const hit = [base, `${base}.ts`].find((p) => known.has(p));
      if (hit) targets.push(hit);
      else unresolved.push(`${rel(file)}: '${spec}'`);
    }
    edges.set(file, targets);
  }
  return { edges, unresolved };
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function circles(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const strong = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (edges.get(v) ?? []).includes(v)) found.push(scc.map(rel).sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) strong(v);
  return found;
}

/** Every function-like node longer than `max` lines, as `path:line name (N lines)`. */
function longFunctions(max: number): string[] {
  const out: string[] = [];
  for (const { file, sf } of srcFiles) {
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const lines = sf.getLineAndCharacterOfPosition(node.getEnd()).line - start + 1;
        if (lines > max) out.push(`${rel(file)}:${start + 1} ${functionName(node)} (${lines} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

function functionName(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name))
    return parent.name.text;
  return ts.isConstructorDeclaration(node) ? 'constructor' : '(anonymous)';
}

describe('src/ keeps the house of docs/design.md (layers low to high, no circles, small modules)', () => {
  const { edges, unresolved } = importGraph();

  it('every folder under src/ is a known layer (add a new one to LAYERS in this test)', () => {
    const unknown = [...new Set(srcFiles.map((f) => layerOf(f.file)))].filter((l) => !rankOf.has(l));
    expect(unknown).toEqual([]);
  });

  it('every relative import names a file that exists (tslab cannot import a folder)', () => {
    expect(unresolved).toEqual([]);
  });

  it('has no import circles (type-only imports count too)', () => {
    expect(circles(edges)).toEqual([]);
  });

  it('no folder imports a folder on its own layer or above it', () => {
    const breaks: string[] = [];
    for (const [from, targets] of edges) {
      const a = layerOf(from);
      for (const to of targets) {
        const b = layerOf(to);
        if (a === b) continue;
        const ok = (rankOf.get(b) ?? Infinity) < (rankOf.get(a) ?? -Infinity) && (a !== 'sim' || SIM_MAY_IMPORT.has(b));
        if (!ok) breaks.push(`${rel(from)} (${a}) -> ${rel(to)} (${b})`);
      }
    }
    expect(breaks).toEqual([]);
  });

  it(`no file under src/ is over ${MAX_FILE_LINES} lines`, () => {
    const big = srcFiles
      .map(({ file, text }) => ({ file: rel(file), lines: text.split('\n').length - (text.endsWith('\n') ? 1 : 0) }))
      .filter((f) => f.lines > MAX_FILE_LINES)
      .map((f) => `${f.file} (${f.lines} lines)`);
    expect(big).toEqual([]);
  });

  it(`no function under src/ is over ${MAX_FUNCTION_LINES} lines (nested functions count in their parent too)`, () => {
    expect(longFunctions(MAX_FUNCTION_LINES)).toEqual([]);
  });

  it('the old grab-bag folders src/load and src/server are gone', () => {
    const old = srcFiles.map((f) => rel(f.file)).filter((f) => /^src\/(load|server)\//.test(f));
    expect(old).toEqual([]);
  });
});
