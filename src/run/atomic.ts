/**
 * Crash-safe file writes for run folders.
 *
 * - Whole JSON files (manifest, summary) are written to a temp file in the same folder, fsynced and
 *   renamed over the target: a reader sees the old file or the new one, never half of one.
 * - Line files (`requests.jsonl`, `metrics.jsonl`) get each record as ONE `fs.writeSync` of a whole
 *   line on a descriptor opened in append mode. A process crash cannot tear a line except the very
 *   last one of the file, and `loadRun` reports and skips such a line. Lines reach the kernel at
 *   once, so a killed process loses nothing already appended; only a power cut can lose the tail
 *   unless `fsync: true` (each line then costs a disk flush, ~1–10 ms).
 */

import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';

/** JSON text as LoadLab writes it: 2-space indent and a final newline. NaN/±Infinity become null. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** fsync a directory so a rename in it survives a power cut (best effort: not possible on Windows). */
function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Directories cannot be opened or fsynced on some platforms; the rename itself is still atomic.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Write `value` as JSON to `file` atomically: temp file `.<name>.<pid>.<hex>.tmp` in the same folder,
 * fsync, rename over `file`, fsync the folder. The temp file is removed if anything fails.
 * The folder must exist.
 */
export function writeJsonAtomic(file: string, value: unknown): void {
  writeTextAtomic(file, jsonText(value));
}

/** Same as `writeJsonAtomic` for ready-made text (UTF-8). */
export function writeTextAtomic(file: string, text: string): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let fd: number | undefined;
  try {
    fd = fs.openSync(tmp, 'wx');
    fs.writeFileSync(fd, text, 'utf8');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fsyncDir(dir);
}

/** Options of `openLineAppender`. */
export interface AppenderOptions {
  /** fsync after every line (survives power loss, costs a disk flush per line). Default false. */
  fsync?: boolean;
}

/** An open JSON-lines file. */
export interface LineAppender {
  /** The file being appended to. */
  readonly file: string;
  /** Lines written through this appender. */
  readonly lines: number;
  /** Append `value` as one JSON line (one `writeSync` of the whole line). */
  append(value: unknown): void;
  /** Close the descriptor; later `append` calls throw. Safe to call twice. */
  close(): void;
}

/**
 * Open `file` (created if missing) for appending JSON lines. Each `append` serializes the value
 * with `JSON.stringify` (no newlines inside; NaN → null) and writes line + '\n' with a single
 * `fs.writeSync` on an `O_APPEND` descriptor, so concurrent appenders never interleave inside a line.
 */
export function openLineAppender(file: string, opts: AppenderOptions = {}): LineAppender {
  let fd: number | undefined = fs.openSync(file, 'a');
  let lines = 0;
  return {
    file,
    get lines() {
      return lines;
    },
    append(value: unknown) {
      if (fd === undefined) throw new Error(`${file} is closed; open a new appender (or run) to write more lines`);
      const buf = Buffer.from(`${JSON.stringify(value)}\n`, 'utf8');
      let written = fs.writeSync(fd, buf);
      // Regular files take the whole buffer in one write(2); loop only for the pathological short write.
      while (written < buf.length) written += fs.writeSync(fd, buf, written);
      if (opts.fsync) fs.fsyncSync(fd);
      lines++;
    },
    close() {
      if (fd === undefined) return;
      fs.closeSync(fd);
      fd = undefined;
    },
  };
}
