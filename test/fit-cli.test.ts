/**
 * `loadlab calibrate` on real HTTP: against a plain OpenAI-compatible server without `/metrics`
 * (a scripted SSE server: fixed first-token delay and token gap) it still fits from client timings,
 * writes a valid `calibrated` profile and names what it could not identify; wrong flags exit 2 naming
 * the fix. The probe plan respects the KV capacity and max_model_len it is given.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calibrateCommand } from '../src/cli/calibrate';
import { probePlan } from '../src/fit/probe-plan';
import { parseProfileDocument } from '../src/sim/engine/profile-schema';
import { type ScriptedServer, startScriptedServer } from './helpers/sse-server';

const tmp = mkdtempSync(join(tmpdir(), 'loadlab-fit-cli-'));
let server: ScriptedServer;

beforeAll(async () => {
  server = await startScriptedServer({ firstTokenDelayMs: 20, gapMs: 5 });
});
afterAll(async () => {
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

function captured() {
  let out = '';
  let err = '';
  const sink = (f: (s: string) => void) => new Writable({ write: (c, _e, done) => (f(String(c)), done()) });
  return {
    io: { stdout: sink((s) => (out += s)), stderr: sink((s) => (err += s)) },
    out: () => out,
    err: () => err,
  };
}

describe('loadlab calibrate', () => {
  it('fits what it can from client timings against a server without /metrics, and says what it could not identify', async () => {
    const c = captured();
    const file = join(tmp, 'scripted.json');
    const code = await calibrateCommand(['--base-url', server.url, '--out', file, '--quick'], c.io);
    expect(code, c.err()).toBe(0);
    expect(c.err()).toMatch(/means from client timings/);
    expect(c.err()).toMatch(/\[1\/\d+\] prefill p=16/);
    expect(c.out()).toMatch(/NOT IDENTIFIED/);
    expect(c.out()).toMatch(/^parameter +unit +prior +value +95 % interval +status$/m);
    const doc = parseProfileDocument(JSON.parse(readFileSync(file, 'utf8')), file);
    expect(doc.profile.status).toBe('calibrated');
    expect(doc.calibration?.against.measuredFrom).toBe('client timings');
    expect(doc.calibration?.against.simulated).toBe(false);
    expect(doc.calibration?.notIdentified?.length).toBeGreaterThan(0);
    expect(doc.calibration?.residuals.every((r) => r.source === 'client')).toBe(true);
  }, 120_000);

  it('refuses wrong flags with exit 2 and a message naming the fix', async () => {
    const cases: [string[], RegExp][] = [
      [['--out', join(tmp, 'x.json')], /--base-url URL is required/],
      [['--base-url', server.url], /--out FILE is required/],
      [['--base-url', server.url, '--out', join(tmp, 'x.txt')], /--out must name a \.json file/],
      [['--base-url', server.url, '--out', join(tmp, 'x.json'), '--fast'], /unknown flag '--fast'/],
      [['--base-url', server.url, '--out', join(tmp, 'x.json'), '--prior', 'rtx4090-qwen'], /unknown profile 'rtx4090-qwen'/],
    ];
    for (const [argv, msg] of cases) {
      const c = captured();
      expect(await calibrateCommand(argv, c.io), argv.join(' ')).toBe(2);
      expect(c.err()).toMatch(msg);
    }
  });

  it('exits 1 naming the fix when nothing listens', async () => {
    const c = captured();
    expect(await calibrateCommand(['--base-url', 'http://127.0.0.1:1', '--out', join(tmp, 'y.json')], c.io)).toBe(1);
    expect(c.err()).toMatch(/cannot reach http:\/\/127\.0\.0\.1:1/);
  });
});

describe('probePlan', () => {
  it('keeps waves inside 80 % of the KV capacity and probes under max_model_len', () => {
    const plan = probePlan({ kvCapacityTokens: 20_000, maxModelLen: 1100 });
    for (const p of plan) {
      expect(p.promptTokens + p.outputTokens).toBeLessThan(1100);
      expect(p.concurrency * Math.ceil((p.promptTokens + p.outputTokens) / 16) * 16).toBeLessThanOrEqual(16_000);
    }
    expect(plan.some((p) => p.name === 'prefill p=2000')).toBe(false);
    expect(() => probePlan({ maxModelLen: 10 })).toThrow(/--max-model-len/);
  });
});
