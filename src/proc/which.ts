/**
 * Finding an executable the way a shell does, before spawning it, so a missing tool
 * (`nvidia-smi` on a machine without a GPU, `vllm` outside its venv) is reported plainly
 * instead of as a spawn `ENOENT`.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

function isExecutableFile(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * The absolute path of `bin`: as given when it contains a `/` (relative to the working
 * directory), else the first match on `PATH` (default `process.env.PATH`). Undefined when
 * there is no such executable file.
 */
export function which(bin: string, pathEnv: string | undefined = process.env.PATH): string | undefined {
  if (bin.includes('/')) {
    const p = isAbsolute(bin) ? bin : resolve(bin);
    return isExecutableFile(p) ? p : undefined;
  }
  for (const dir of (pathEnv ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, bin);
    if (isExecutableFile(p)) return p;
  }
  return undefined;
}
