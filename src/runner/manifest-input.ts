/**
 * What a load run writes into its manifest at the start: the probed target, the load shape
 * and the workload, plus the caller's extras. Pure.
 */

import { randomBytes } from 'node:crypto';
import { loadlabVersion, makeClock, timeStamp, type ManifestInput, type RunClock, type RunManifest } from '../run/manifest';
import { describeShape, type LoadShape } from '../schedule/shapes';
import type { ResolvedTarget } from './target';

/** Inputs of `loadManifestInput`. */
export interface LoadManifestParts {
  target: ResolvedTarget;
  shape: LoadShape;
  /** Measured requests. */
  requests: number;
  warmup: number;
  workloadInfo: Record<string, unknown>;
  /** The run's origin on `performance.now()`, ms. */
  originPerfMs: number;
  /** How the client stamps token chunks (src/client/chunk-stamp.ts). */
  chunkStamp?: RunClock['chunkStamp'];
  lesson?: string;
  name?: string;
  /** Merged last; `target` and `workload` are merged one level deep. */
  extra?: Partial<RunManifest>;
}

/** The manifest fields a load run provides (`createRun` fills the rest). */
export function loadManifestInput(p: LoadManifestParts): ManifestInput {
  const { target: extraTarget, workload: extraWorkload, ...extra } = p.extra ?? {};
  // A timeline's requests and a sessions shape's conversations stay out (the workload block describes them).
  const { requests: _r, conversations: _c, ...shapeOptions } = p.shape as LoadShape & Record<string, unknown>;
  const probe = p.target.probe;
  return {
    target: {
      baseUrl: p.target.rootUrl,
      kind: probe.kind,
      simulated: probe.simulated,
      model: p.target.model,
      ...(probe.serverVersion !== undefined ? { serverVersion: probe.serverVersion } : {}),
      ...(probe.engine !== undefined ? { engine: probe.engine } : {}),
      ...(probe.maxModelLen !== undefined ? { maxModelLen: probe.maxModelLen } : {}),
      ...(probe.cacheConfig !== undefined ? { cacheConfig: probe.cacheConfig } : {}),
      ...(probe.simProfile !== undefined ? { simProfile: probe.simProfile } : {}),
      probe,
      ...extraTarget,
    },
    load: {
      shape: p.shape.kind,
      options: { ...shapeOptions, requests: p.requests, warmup: p.warmup, label: describeShape(p.shape) },
    },
    workload: { ...p.workloadInfo, ...extraWorkload },
    clock: makeClock(p.originPerfMs, p.chunkStamp),
    ...(p.lesson !== undefined ? { lesson: p.lesson } : {}),
    ...(p.name !== undefined ? { name: p.name } : {}),
    ...extra,
  };
}

/** A complete manifest for a run kept in memory only (`out: false`), as `createRun` would write it. */
export function memoryManifest(input: ManifestInput): RunManifest {
  const stamp = timeStamp();
  return {
    schema: 1,
    runId: `${stamp}-${randomBytes(4).toString('hex')}`,
    loadlabVersion: loadlabVersion(),
    nodeVersion: process.version,
    platform: `${process.platform}-${process.arch}`,
    startedAt: new Date().toISOString(),
    status: 'running',
    ...input,
    clock: input.clock ?? makeClock(),
  };
}
