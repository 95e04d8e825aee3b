/**
 * A dataset file that cannot be used. The message names the file, the line (when known) and the
 * fix, e.g. `data/x.jsonl line 7: not JSON (Unexpected token ...); each line must be one object
 * like {"prompt": "...", "output_len": 128}`.
 */

import { readFileSync } from 'node:fs';

/** A bad dataset file or option; `file` and `line` (1-based) say where, when known. */
export class DatasetError extends Error {
  readonly file?: string;
  readonly line?: number;
  constructor(message: string, where: { file?: string; line?: number } = {}) {
    const at = where.file ? `${where.file}${where.line !== undefined ? ` line ${where.line}` : ''}: ` : '';
    super(`${at}${message}`);
    this.name = 'DatasetError';
    if (where.file !== undefined) this.file = where.file;
    if (where.line !== undefined) this.line = where.line;
  }
}

/** The file's text (UTF-8, a leading BOM dropped); a missing or unreadable file throws DatasetError naming it. */
export function readDatasetText(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'a folder, not a file' : (err as Error).message;
    throw new DatasetError(`cannot read the ${what} (${why}); check --dataset-path`, { file });
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** 1-based line of character `offset` in `text`. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < Math.min(offset, text.length); i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * `JSON.parse(text)`, or a DatasetError naming the file and the line of the syntax error
 * (from V8's "at position N"; `line` when the text is that one line of the file), with `fix` appended.
 */
export function parseJsonAt(text: string, file: string, fix: string, line?: number): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const msg = (err as Error).message;
    const pos = /at position (\d+)/.exec(msg);
    const at = line ?? (pos ? lineAt(text, Number(pos[1])) : undefined);
    throw new DatasetError(`not valid JSON (${msg}); ${fix}`, { file, ...(at !== undefined ? { line: at } : {}) });
  }
}

/**
 * Non-blank lines of a JSON Lines file, each parsed, with its 1-based line number. A line that is
 * not JSON, or not an object, throws DatasetError naming the line and `example`.
 */
export function readJsonLines(
  file: string,
  what: string,
  example: string,
): Array<{ line: number; value: Record<string, unknown> }> {
  const text = readDatasetText(file, what);
  const out: Array<{ line: number; value: Record<string, unknown> }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (raw === '') continue;
    const fix = `each line must be one JSON object like ${example}`;
    const value = parseJsonAt(raw, file, fix, i + 1);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new DatasetError(`not a JSON object; ${fix}`, { file, line: i + 1 });
    }
    out.push({ line: i + 1, value: value as Record<string, unknown> });
  }
  if (out.length === 0) throw new DatasetError(`the ${what} is empty; it needs lines like ${example}`, { file });
  return out;
}

/**
 * 1-based line where each element of a top-level JSON array starts (for errors about entry i).
 * Assumes `text` is valid JSON; strings and escapes are skipped.
 */
export function arrayEntryLines(text: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let depth = 0;
  let inString = false;
  let expectValue = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\n') line++;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (/\s/.test(ch)) continue;
    if (depth === 1 && expectValue && ch !== ']') {
      lines.push(line);
      expectValue = false;
    }
    if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') {
      depth++;
      if (depth === 1) expectValue = true;
    } else if (ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 1) expectValue = true;
  }
  return lines;
}
