import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runLoad } from '../src/runner/runner';
import { closedLoop } from '../src/schedule/shapes';
import { makeRequest } from '../src/workload/workload';
import { closedPort } from './helpers/sse-server';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'loadlab-validate-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('runLoad checks out and the timeouts before the target is probed (issue #17 item 10)', () => {
  const base = async () => ({
    baseUrl: `http://127.0.0.1:${await closedPort()}`,
    workload: [makeRequest('hi')],
    requests: 1,
    shape: closedLoop(1),
  });

  it('an out that is a file, or a folder without a run, fails naming the fix (not "Cannot reach")', async () => {
    const file = path.join(tmp, 'afile');
    fs.writeFileSync(file, 'x');
    await expect(runLoad({ ...(await base()), out: file })).rejects.toThrow(`${file} is a file, not a folder`);
    const mine = path.join(tmp, 'mine');
    fs.mkdirSync(mine);
    fs.writeFileSync(path.join(mine, 'thesis.tex'), 'x');
    await expect(runLoad({ ...(await base()), out: mine, replace: true })).rejects.toThrow(
      /holds no LoadLab run \(thesis\.tex\)/,
    );
    expect(fs.readdirSync(mine)).toEqual(['thesis.tex']);
  });

  it('a timeout past the 2^31−1 ms timer limit is refused with the range', async () => {
    await expect(runLoad({ ...(await base()), out: false, timeoutMs: 3e9 })).rejects.toThrow(
      'timeoutMs must be at most 2147483647 ms (about 24 days, the longest timer Node allows), got 3000000000',
    );
    await expect(runLoad({ ...(await base()), out: false, idleTimeoutMs: 2 ** 31 })).rejects.toThrow(
      /idleTimeoutMs must be at most 2147483647 ms/,
    );
  });
});
