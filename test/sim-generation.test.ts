/** `--vllm-version`: which vLLM generation the simulator emulates on the wire (src/sim/http/generation.ts). */
import { afterAll, describe, expect, it } from 'vitest';
import { resolveGeneration, versionAtLeast } from '../src/sim/http/generation';
import { type RunningSim, serveSim } from '../src/sim/serve';
import { parseServeArgs } from '../src/vllm/flags';

describe('resolveGeneration', () => {
  it('defaults to the newest generation', () => {
    expect(resolveGeneration()).toMatchObject({ id: 'v0.19', version: '0.19.0', engine: 'V1' });
  });

  it('maps a minor or patch release to its generation and reports the version as given', () => {
    expect(resolveGeneration('0.6')).toMatchObject({ id: 'v0.6', version: '0.6.6', engine: 'V0' });
    expect(resolveGeneration('0.6.3')).toMatchObject({ id: 'v0.6', version: '0.6.3', engine: 'V0' });
    expect(resolveGeneration('v0.10.1.1')).toMatchObject({ id: 'v0.10', version: '0.10.1.1', engine: 'V1' });
  });

  it('refuses a release it does not emulate, naming the supported ones', () => {
    expect(() => resolveGeneration('0.8.5')).toThrow(/--vllm-version 0\.8\.5 is not emulated.*0\.6\.6 \(V0\).*0\.19\.0/);
    expect(() => resolveGeneration('latest')).toThrow(/not emulated/);
  });

  it('compares versions numerically', () => {
    expect(versionAtLeast('0.10.2', '0.9.0')).toBe(true);
    expect(versionAtLeast('0.6.6', '0.12')).toBe(false);
    expect(versionAtLeast('0.12.0', '0.12')).toBe(true);
    expect(versionAtLeast('nightly', '0.1')).toBe(false);
  });
});

describe('simulator --vllm-version', () => {
  const sims: RunningSim[] = [];
  afterAll(async () => {
    for (const s of sims) await s.close();
  });

  it('reports the emulated release on GET /version', async () => {
    const sim = await serveSim(parseServeArgs(['--port', '0', '--stats-interval-s', '0', '--vllm-version', '0.10.2']), () => {});
    sims.push(sim);
    const body = await (await fetch(`${sim.url}/version`)).json();
    expect(body).toMatchObject({ version: '0.10.2', simulated: true });
  });

  it('fails before serving on a release it does not emulate', async () => {
    await expect(serveSim(parseServeArgs(['--port', '0', '--vllm-version', '0.7.3']), () => {})).rejects.toThrow(/not emulated/);
  });
});
