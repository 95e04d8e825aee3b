/**
 * Before the tests: rebuild dist/ when it is missing or a file under src/ is newer than it, so every `loadlab` and
 * helper process the tests start runs the current code in the form that ships (bin/loadlab.js and
 * src/proc/dist.ts would run the sources through tsx instead, which starts and loads differently: a `loadlab run`
 * with undici traced 28 WebAssembly functions compiled by Liftoff and one tiered up to TurboFan there, against 15
 * and none from dist/, so test/cli-wasm-liftoff.test.ts failed after an edit without `npm run build`).
 * `LOADLAB_NO_DIST=1` leaves dist/ alone (everything runs through tsx then).
 */
import { execFileSync } from 'node:child_process';
import { fromRoot } from '../src/paths';
import { distProblem } from '../src/proc/dist';

export default function setup(): void {
  if (process.env.LOADLAB_NO_DIST === '1') return;
  const problem = distProblem();
  if (problem === undefined) return;
  process.stderr.write(`test setup: building dist/ first: ${problem}\n`);
  execFileSync(process.execPath, [fromRoot('bin', 'build-dist.js'), '--strict'], { stdio: 'inherit' });
}
