/**
 * Reading a JSON-lines file written by a run (`requests.jsonl`, `metrics.jsonl`, `gpu.jsonl`):
 * every line that parses and passes the check is kept; every other line is reported, never thrown.
 */

import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Parse a JSON-lines file. Lines that are not JSON, or that `check` rejects (it returns the reason;
 * it gets the 1-based line number too), are skipped and described in `problems` with the file name
 * and line number, in file order. A file that cannot be read at all (e.g. it is a folder) gives `[]`
 * and one problem.
 */
export function readJsonLines(
  file: string,
  problems: string[],
  check: (value: unknown, line: number) => string | undefined = () => undefined,
): unknown[] {
  const name = path.basename(file);
  let lines: string[];
  try {
    lines = fs.readFileSync(file, 'utf8').split('\n');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    problems.push(`${name} could not be read (${e.code ?? e.message}: ${file}); no lines read from it`);
    return [];
  }
  const out: unknown[] = [];
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      const last = i === lines.length - 1; // no newline after it: the write was cut off
      problems.push(
        last
          ? `${name} line ${i + 1}: truncated last line (the run was probably killed mid-write); skipped`
          : `${name} line ${i + 1}: not valid JSON; skipped: ${text.slice(0, 60)}`,
      );
      return;
    }
    const why = check(value, i + 1);
    if (why) problems.push(`${name} line ${i + 1}: ${why}; skipped`);
    else out.push(value);
  });
  return out;
}
