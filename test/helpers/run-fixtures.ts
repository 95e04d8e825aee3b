/** What run-folder tests share: a manifest input and a small finished record. */
import type { ManifestInput } from '../../src/run/manifest';
import type { RequestRecord } from '../../src/types';

/** A simulated target under a pool of 8. */
export const input: ManifestInput = {
  target: { baseUrl: 'http://127.0.0.1:8000', kind: 'sim', simulated: true, model: 'sim-model' },
  load: { shape: 'pool', options: { concurrency: 8 } },
};

/** A complete two-token record whose times are offsets from `index` (TTFT 10 ms, E2E 15 ms). */
export function record(index: number): RequestRecord {
  return {
    index,
    requestId: `r${index}`,
    warmup: false,
    ok: true,
    api: 'chat',
    intendedStartMs: index,
    startMs: index,
    firstTokenMs: index + 10,
    chunkMs: [index + 10, index + 15],
    chunkTokens: [1, 1],
    endMs: index + 15,
    outputTokens: 2,
    ttftMs: 10,
    e2eMs: 15,
    tpotMs: 5,
    itlMs: [5],
    queueMs: 0,
  };
}
