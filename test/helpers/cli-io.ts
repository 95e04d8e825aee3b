/** What CLI tests share: an in-memory `CliIo` that captures what a command writes, and JSON file readers. */
import { readFileSync } from 'node:fs';

/** A `CliIo` whose stdout and stderr collect into `out`. */
export function capture() {
  const out = { stdout: '', stderr: '' };
  const io = {
    stdout: { write: (s: string) => ((out.stdout += s), true) } as unknown as NodeJS.WritableStream,
    stderr: { write: (s: string) => ((out.stderr += s), true) } as unknown as NodeJS.WritableStream,
  };
  return { out, io };
}

/** A JSON file, parsed. */
export const readJson = (f: string) => JSON.parse(readFileSync(f, 'utf8'));

/** A JSON Lines file, each non-empty line parsed. */
export const lines = (f: string) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
