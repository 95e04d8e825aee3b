/**
 * Reads which flags the installed `vllm serve` has, once per vLLM version: `<vllm> --version`, then
 * `<vllm> serve --help=all` (parsed by `serve-help-check.ts`), cached in memory and in a JSON file
 * under the OS temp folder, so the check costs one `--version` after the first launch.
 *
 * Why `--help=all`: since vLLM ~0.10 a plain `vllm serve --help` prints only the config groups, and
 * current vLLM only a few core flags (`vllm/entrypoints/cli/main.py`, `is_plain_help`;
 * `vllm/utils/argparse_utils.py`, `FlexibleArgumentParser.format_help`: `--help=all` returns the full
 * argparse help). Older vLLM does not know `--help=all` (argparse exits 2), so plain `--help`
 * (which then lists every flag) is the fallback. Help text that lists no `--port` is not trusted.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServeHelp } from './serve-help-check';

/** What `readServeHelp` learnt. */
export interface ServeHelp {
  /** `vllm --version`, when it answered. */
  version?: string;
  /** The option strings of `vllm serve`; undefined when the help could not be run or parsed. */
  flags?: Set<string>;
  /** Where the flags came from. */
  source?: 'memory' | 'file' | 'help';
  /** Why the flags are missing, in words (the launch goes on without the check). */
  note?: string;
}

/** Options of `readServeHelp`. */
export interface ServeHelpOptions {
  /** Per-command timeout, ms; default 120 000 (importing vLLM is slow on a cold disk). */
  timeoutMs?: number;
  /** Folder of the JSON cache; default `<os tmpdir>/loadlab-vllm-help`. */
  cacheDir?: string;
  /** Extra environment variables for the commands. */
  env?: Record<string, string | undefined>;
}

/** A run of the vLLM executable that was stopped by a signal we did not send (e.g. a kernel interrupt). */
export class ServeHelpInterrupted extends Error {}

const memory = new Map<string, Set<string>>();

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  error?: string;
}

function run(exe: string, args: string[], o: ServeHelpOptions): Promise<Ran> {
  const timeout = o.timeoutMs ?? 120_000;
  const env = { ...process.env, ...o.env };
  return new Promise((resolve, reject) => {
    execFile(exe, args, { timeout, env, maxBuffer: 32 << 20, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (!err) return resolve({ code: 0, stdout, stderr });
      const e = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null; code?: unknown };
      if (e.signal && !e.killed)
        return reject(new ServeHelpInterrupted(`\`${exe} ${args.join(' ')}\` was stopped by ${e.signal}`));
      if (e.killed) return resolve({ code: -1, stdout, stderr, error: `no answer within ${Math.round(timeout / 1000)} s` });
      // A number: it ran and exited so (the caller quotes stderr); otherwise it did not run (e.g. ENOENT).
      if (typeof e.code === 'number') return resolve({ code: e.code, stdout, stderr });
      resolve({ code: -1, stdout, stderr, error: e.message.split('\n')[0] ?? 'failed' });
    });
  });
}

/** The version `vllm --version` prints (its last line), e.g. `0.11.0`; undefined if none. */
export function parseVersion(stdout: string): string | undefined {
  const last = stdout.trim().split('\n').pop()?.trim() ?? '';
  return /^v?(\d+\.\d+[\w.+-]*)$/.exec(last)?.[1];
}

/** The cache key: the version, and a hash of the executable's path (two installs of one version may differ in plugins). */
function cacheKey(exe: string, version: string): string {
  return `${version.replace(/[^\w.+-]/g, '_')}-${createHash('sha256').update(exe).digest('hex').slice(0, 10)}`;
}

function cacheFile(dir: string, key: string): string {
  return join(dir, `vllm-${key}.json`);
}

function readCacheFile(dir: string, key: string, version: string): Set<string> | undefined {
  try {
    const j = JSON.parse(readFileSync(cacheFile(dir, key), 'utf8')) as { version?: unknown; flags?: unknown };
    if (j.version === version && Array.isArray(j.flags) && j.flags.every((f) => typeof f === 'string')) return new Set(j.flags);
  } catch {
    /* no cache yet, or a broken one: read the help again */
  }
  return undefined;
}

function writeCacheFile(dir: string, key: string, version: string, flags: Set<string>): void {
  try {
    mkdirSync(dir, { recursive: true });
    const file = cacheFile(dir, key);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify({ version, flags: [...flags].sort(), savedAt: new Date().toISOString() })}\n`);
    renameSync(tmp, file);
  } catch {
    /* a cache that cannot be written only costs time */
  }
}

/** `serve --help=all`, else `serve --help`: the flags, or why there are none. */
async function helpFlags(exe: string, o: ServeHelpOptions): Promise<{ flags?: Set<string>; note?: string }> {
  let why = '';
  for (const args of [
    ['serve', '--help=all'],
    ['serve', '--help'],
  ]) {
    const r = await run(exe, args, o);
    const flags = parseServeHelp(r.stdout);
    if (r.code === 0 && flags.has('--port')) return { flags };
    why = r.error ?? (r.code === 0 ? 'it lists no --port' : `exit code ${r.code}: ${r.stderr.trim().split('\n').pop() ?? ''}`);
  }
  return { note: `could not read \`${exe} serve --help=all\` (${why}), so the flags were not checked before the launch` };
}

/**
 * The flags the `vllm serve` of executable `exe` has. Never throws for a help that cannot be run or
 * parsed (`note` says why; the launch goes on), only `ServeHelpInterrupted` when a signal we did not
 * send stopped the command. The cache is keyed by `vllm --version` (and the executable's path);
 * without a version nothing is cached.
 */
export async function readServeHelp(exe: string, o: ServeHelpOptions = {}): Promise<ServeHelp> {
  const dir = o.cacheDir ?? join(tmpdir(), 'loadlab-vllm-help');
  const v = await run(exe, ['--version'], o);
  const version = v.code === 0 ? parseVersion(v.stdout) : undefined;
  const out: ServeHelp = version ? { version } : {};
  const key = version ? cacheKey(exe, version) : undefined;
  if (version && key) {
    const hit = memory.get(`${dir}\0${key}`);
    if (hit) return { ...out, flags: hit, source: 'memory' };
    const file = readCacheFile(dir, key, version);
    if (file) {
      memory.set(`${dir}\0${key}`, file);
      return { ...out, flags: file, source: 'file' };
    }
  }
  const h = await helpFlags(exe, o);
  if (!h.flags) return { ...out, note: h.note };
  if (version && key) {
    memory.set(`${dir}\0${key}`, h.flags);
    writeCacheFile(dir, key, version, h.flags);
  }
  return { ...out, flags: h.flags, source: 'help' };
}

/** Forget the in-memory cache (tests; the file cache stays). */
export function clearServeHelpMemory(): void {
  memory.clear();
}
