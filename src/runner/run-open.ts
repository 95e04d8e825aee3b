/**
 * Opening a run before any load: the prompt-length preflight against the server's
 * `max_model_len`, and the run folder with its first manifest (or an in-memory one).
 */
import type { Client } from '../client/client';
import type { TargetAuth } from '../client/url';
import type { RunManifest } from '../run/manifest';
import { createRun, type RunWriter } from '../run/store';
import { loadManifestInput, memoryManifest } from './manifest-input';
import { checkPromptLengths } from './preflight';
import type { RunLoadOptions } from './run-options';
import type { RunStop } from './runner-stop';
import type { ResolvedTarget } from './target';
import type { ResolvedRunOptions } from './validate';

/** Check every measured prompt against the server's `max_model_len`, or say why that was skipped. */
export async function preflightPrompts(target: ResolvedTarget, ro: ResolvedRunOptions, auth: TargetAuth): Promise<unknown> {
  const maxModelLen = target.probe.maxModelLen;
  if (maxModelLen === undefined) {
    return { checked: 0, skipped: 'the server did not report max_model_len; prompt lengths were not checked' };
  }
  const specs = Array.from({ length: ro.n }, (_, i) => ro.specOf(i));
  return checkPromptLengths(target.rootUrl, target.model, specs, maxModelLen, auth);
}

/** Create the run folder (or an in-memory manifest); on failure close the client, detach, rethrow. */
export async function openRunStore(
  opts: RunLoadOptions,
  ro: ResolvedRunOptions,
  target: ResolvedTarget,
  origin: number,
  client: Client,
  stop: RunStop,
): Promise<{ writer?: RunWriter; manifest: RunManifest }> {
  const input = loadManifestInput({
    target,
    shape: ro.shape,
    requests: ro.n,
    warmup: ro.warmup,
    workloadInfo: ro.workloadInfo,
    originPerfMs: origin,
    ...(opts.stamp !== undefined ? { chunkStamp: opts.stamp } : {}), // checked once, in runLoad
    ...(opts.lesson !== undefined ? { lesson: opts.lesson } : {}),
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    ...(opts.manifestExtra !== undefined ? { extra: opts.manifestExtra } : {}),
  });
  try {
    if (opts.out === false) return { manifest: memoryManifest(input) };
    const where = typeof opts.out === 'string' ? { dir: opts.out } : { root: opts.root, lesson: opts.lesson, name: opts.name };
    const writer = createRun({ ...where, replace: opts.replace }, input);
    return { writer, manifest: writer.manifest };
  } catch (err) {
    await client.close();
    stop.detach();
    throw err;
  }
}
