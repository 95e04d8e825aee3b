/**
 * The shape of one doctor check's outcome, shared by `doctor.ts` (which runs and shows the
 * checks) and the `doctor-*.ts` files (which make them), so none of them imports another in a
 * circle; and what the doctor learnt about the target, shared by `doctor-target.ts` and
 * `doctor-max-model-len.ts` for the same reason.
 */
import type { TargetMode } from '../lesson/open-target';

/** One check's outcome. */
export interface Check {
  /** Short name, e.g. `node`, `tslab kernel`, `port 8000`. */
  name: string;
  /** `required`: a failure makes the doctor fail (exit 1); `optional`: a failure is a warning. */
  level: 'required' | 'optional';
  ok: boolean;
  /** What was found, in words (versions, paths, numbers as measured). */
  detail: string;
  /** The one command that fixes a failure (absent when ok). */
  fix?: string;
}

/** What the doctor learnt about the target (made by `checkTarget`, read by `checkMaxModelLen`). */
export interface TargetInfo {
  mode: TargetMode;
  baseUrl?: string;
  model?: string;
  maxModelLen?: number;
  simulated: boolean;
  version?: string;
  /** `V1`, `V0` or `unknown`, with the evidence in words. */
  engine?: string;
  apiKey?: string;
}
